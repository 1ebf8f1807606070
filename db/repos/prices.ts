import type { Queryable } from '../index.ts'
import { whereTuplesIn } from '../tuple-list.ts'

/** The fiat currencies of `report_prices`. */
export type PriceCurrency = 'usd' | 'eur'

/** A feed's round: the price is `answer` / 10^`decimals`, set by round `round_id` of `feed` at `price_time`. */
export interface PriceRound {
  feed: string
  round_id: bigint
  answer: bigint
  decimals: number
  price_time: Date
}

/**
 * A price beside a report: a feed's round, or (`derived_from`, ETH/EUR where no ETH / EUR feed exists) ETH / USD
 * / EUR / USD with 18 decimals (engine/cross-price.ts), whose `feed`, `round_id` and `price_time` are its
 * ETH / USD round's and `derived_from` holds both rounds. Rows stored before derived prices have none.
 */
export interface StoredPrice extends PriceRound {
  derived_from?: { eth_usd: PriceRound; eur_usd: PriceRound }
}

/** No price beside a report, and why (`feed` null when no feed is configured for the currency). */
export interface MissingStoredPrice {
  feed: string | null
  missing_reason: string
}

/** The stored price of one currency beside a report: an answer or a missing price. */
export type Price = StoredPrice | MissingStoredPrice

/** A report's prices in every currency. */
export interface ReportPrices {
  usd: Price
  eur: Price
}

/** A row to write: a report's key, the currency, and its price (bigint / Date as read from the chain). */
export type ReportPriceRow = {
  chain_id: number
  block_number: bigint
  log_index: number
  currency: PriceCurrency
} & (StoredPrice | MissingStoredPrice)

interface DbRow {
  chain_id: number
  block_number: string
  log_index: number
  currency: PriceCurrency
  feed: string | null
  round_id: string | null
  answer: string | null
  decimals: number | null
  price_time: Date | null
  missing_reason: string | null
  derived: boolean
  eth_usd_answer: string | null
  eth_usd_decimals: number | null
  eur_usd_feed: string | null
  eur_usd_round_id: string | null
  eur_usd_answer: string | null
  eur_usd_decimals: number | null
  eur_usd_time: Date | null
}

const DERIVED_COLUMNS = [
  'eth_usd_answer',
  'eth_usd_decimals',
  'eur_usd_feed',
  'eur_usd_round_id',
  'eur_usd_answer',
  'eur_usd_decimals',
  'eur_usd_time',
] as const
const COLUMNS = [
  'feed',
  'round_id',
  'answer',
  'decimals',
  'price_time',
  'missing_reason',
  'derived',
  ...DERIVED_COLUMNS,
] as const

/** A stored row as a `Price`. */
function priceOf(row: Omit<DbRow, 'chain_id' | 'block_number' | 'log_index' | 'currency'>): Price {
  if (row.answer === null) return { feed: row.feed, missing_reason: row.missing_reason ?? '' }
  const price: StoredPrice = {
    feed: row.feed as string,
    round_id: BigInt(row.round_id as string),
    answer: BigInt(row.answer),
    decimals: row.decimals as number,
    price_time: row.price_time as Date,
  }
  if (!row.derived) return price
  price.derived_from = {
    eth_usd: {
      feed: price.feed,
      round_id: price.round_id,
      answer: BigInt(row.eth_usd_answer as string),
      decimals: row.eth_usd_decimals as number,
      price_time: price.price_time,
    },
    eur_usd: {
      feed: row.eur_usd_feed as string,
      round_id: BigInt(row.eur_usd_round_id as string),
      answer: BigInt(row.eur_usd_answer as string),
      decimals: row.eur_usd_decimals as number,
      price_time: row.eur_usd_time as Date,
    },
  }
  return price
}

/** The derivation columns of a row to write: both rounds of a derived price, else nulls (`derived` false). */
function derivedColumns(price: StoredPrice | MissingStoredPrice): Record<string, unknown> {
  const from = 'derived_from' in price ? price.derived_from : undefined
  if (!from) return { derived: false, ...Object.fromEntries(DERIVED_COLUMNS.map((c) => [c, null])) }
  return {
    derived: true,
    eth_usd_answer: from.eth_usd.answer.toString(),
    eth_usd_decimals: from.eth_usd.decimals,
    eur_usd_feed: from.eur_usd.feed,
    eur_usd_round_id: from.eur_usd.round_id.toString(),
    eur_usd_answer: from.eur_usd.answer.toString(),
    eur_usd_decimals: from.eur_usd.decimals,
    eur_usd_time: from.eur_usd.price_time,
  }
}

/** The two currencies of a report from its rows; a currency without a row is missing (rows are written in pairs). */
function pairOf(rows: Map<PriceCurrency, Price>): ReportPrices {
  const absent: Price = { feed: null, missing_reason: 'no price stored for this report' }
  return { usd: rows.get('usd') ?? absent, eur: rows.get('eur') ?? absent }
}

/** ETH prices beside oracle reports (`report_prices`): written by the follower with the report, read by the API. */
export function createPricesRepo(db: Queryable) {
  return {
    /**
     * Inserts report prices; a row already present (same report and currency) is left as it is. The report's
     * `oracle_reports` row must exist (written first, in the same transaction). A derived price
     * (`derived_from`) is written with both of its rounds and `derived` true.
     *
     * @example
     * await txRepos.prices.insert([{ chain_id: 1, block_number: 21_000_000n, log_index: 7, currency: 'eur', feed: null, missing_reason: 'no ETH/EUR feed is configured for chain 1' }])
     */
    async insert(rows: readonly ReportPriceRow[]): Promise<void> {
      if (rows.length === 0) return
      const values = rows.map((r) => ({
        chain_id: r.chain_id,
        block_number: r.block_number.toString(),
        log_index: r.log_index,
        currency: r.currency,
        ...('missing_reason' in r
          ? {
              feed: r.feed,
              round_id: null,
              answer: null,
              decimals: null,
              price_time: null,
              missing_reason: r.missing_reason,
            }
          : {
              feed: r.feed,
              round_id: r.round_id.toString(),
              answer: r.answer.toString(),
              decimals: r.decimals,
              price_time: r.price_time,
              missing_reason: null,
            }),
        ...derivedColumns(r),
      }))
      for (let i = 0; i < values.length; i += 1000) {
        await db('report_prices')
          .insert(values.slice(i, i + 1000))
          .onConflict(['chain_id', 'block_number', 'log_index', 'currency'])
          .ignore()
      }
    },

    /**
     * Removes the prices of the reports at or after `fromBlock` (a reorg's rollback; the foreign key on
     * `oracle_reports` would remove them with the reports too). Returns how many rows went.
     */
    async rollbackFrom(chainId: number, fromBlock: bigint): Promise<number> {
      return db('report_prices')
        .where({ chain_id: chainId })
        .where('block_number', '>=', fromBlock.toString())
        .delete()
    },

    /**
     * The prices of the given reports of a chain, keyed `block_number:log_index` (e.g. '21000000:7'); a report
     * without stored rows is absent from the map. One query.
     *
     * @example
     * const prices = await repos.prices.pricesOfReports(1, [{ block_number: 21_000_000n, log_index: 7 }])
     * prices.get('21000000:7')?.usd // { feed, round_id, answer, decimals, price_time } or { feed, missing_reason }
     */
    async pricesOfReports(
      chainId: number,
      reports: readonly { block_number: bigint | string; log_index: number }[],
    ): Promise<Map<string, ReportPrices>> {
      const out = new Map<string, ReportPrices>()
      if (reports.length === 0) return out
      const rows: DbRow[] = await whereTuplesIn(
        db('report_prices')
          .where({ chain_id: chainId })
          .select('block_number', 'log_index', 'currency', ...COLUMNS),
        ['block_number', 'log_index'],
        ['bigint', 'int'],
        reports.map((r) => [r.block_number, r.log_index]),
      )
      const byReport = new Map<string, Map<PriceCurrency, Price>>()
      for (const row of rows) {
        const key = `${row.block_number}:${row.log_index}`
        const pair = byReport.get(key) ?? new Map<PriceCurrency, Price>()
        pair.set(row.currency, priceOf(row))
        byReport.set(key, pair)
      }
      for (const [key, pair] of byReport) out.set(key, pairOf(pair))
      return out
    },

    /**
     * The prices of the days' reports (a day is one report: `days` holds its block_number and log_index), by
     * `report_epoch` as the days carry it (text, e.g. '412345'); a day without stored prices (ingested before
     * prices were stored, or unknown) is absent from the map. One query joining `days` to `report_prices`.
     *
     * @example
     * const prices = await repos.prices.ofDays([{ chain_id: 1, report_epoch: '412345' }])
     * const usd = prices.get('412345')?.usd
     * if (usd && 'answer' in usd) fiatValue(rewardsWei, usd.answer, usd.decimals)
     */
    async ofDays(
      days: readonly { chain_id: number; report_epoch: string | bigint | number }[],
    ): Promise<Map<string, ReportPrices>> {
      const out = new Map<string, ReportPrices>()
      if (days.length === 0) return out
      const rows: (DbRow & { report_epoch: string })[] = await whereTuplesIn(
        db('days as d')
          .join('report_prices as p', (j) =>
            j
              .on('p.chain_id', 'd.chain_id')
              .andOn('p.block_number', 'd.block_number')
              .andOn('p.log_index', 'd.log_index'),
          )
          .select('d.report_epoch', 'p.currency', ...COLUMNS.map((c) => `p.${c}`)),
        ['d.chain_id', 'd.report_epoch'],
        ['int', 'bigint'],
        days.map((d) => [d.chain_id, d.report_epoch]),
      )
      const byEpoch = new Map<string, Map<PriceCurrency, Price>>()
      for (const row of rows) {
        const pair = byEpoch.get(row.report_epoch) ?? new Map<PriceCurrency, Price>()
        pair.set(row.currency, priceOf(row))
        byEpoch.set(row.report_epoch, pair)
      }
      for (const [epoch, pair] of byEpoch) out.set(epoch, pairOf(pair))
      return out
    },
  }
}
/** The prices repository `createPricesRepo` returns. */
export type PricesRepo = ReturnType<typeof createPricesRepo>
