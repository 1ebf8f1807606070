import { createHash } from 'node:crypto'
import { once } from 'node:events'
import type { Writable } from 'node:stream'
import { csvLine } from '../../common/csv.ts'
import type { ReportRatesRow, WalletRatesRow } from '../../db/repos/export-reads.ts'
import type { Price, Repos } from '../../db/repos/index.ts'
import type { AccountRecordRow, ReportDay } from '../../db/repos/reports.ts'
import {
  FIAT_DECIMALS,
  formatUnits,
  formatUnits18,
  GRANULARITIES,
  type Granularity,
  InvalidInputError,
  type JournalAccountMapping,
  type JournalLedgerKey,
  type JournalLine,
  journalAccountNames,
  journalLines,
  PERIOD_HEAD_FIELDS,
  type PriceAnswer,
  parseDateOnly,
  periodFields,
  periodHead,
  periodHeadCells,
  presentRolledPeriod,
  type RolledPeriod,
  type RollupDay,
  rollUp,
  storedRollupDays,
} from '../../engine/index.ts'

/**
 * An export's file (POST /v1/exports, `lsreport export`): CSV (RFC 4180, header first), one account at a time
 * and a page of accounts per read, written as it is made with the stream's backpressure respected, so that an
 * organization-wide export holds one page of accounts' records, never the organization's. Every amount is the
 * API's for the same read: the periods are rolled by engine/rollup.ts from the same stored records and shown
 * by engine/period-presenting.ts (`records`) or booked by engine/journal.ts (`journal`).
 */

/** What an export holds (POST /v1/exports): whose records, which dates, how grouped, in which fields. */
export interface ExportSpec {
  chainId: number
  orgId: string
  /** null: every account of the organization; else these accounts (ids of the organization's). */
  accountIds: string[] | null
  /** YYYY-MM-DD, inclusive. */
  from: string
  to: string
  granularity: Granularity
  /** 'usd' | 'eur' as the summary reads take it; null: ETH only. */
  currency: string | null
  kind: 'records' | 'journal'
  /** Which fee model's fields a `records` export shows (the /eth/v1 or /eth/v0 reads'; LsETH unit). */
  apiVersion: 'v1' | 'v0'
  /** A `journal` export's ledger account names (engine/journal.ts `journalAccountNames`). */
  journalAccounts?: JournalAccountMapping
}

/** Progress of a build, in accounts: `done` of the `total` accounts the export covers are written. */
export interface ExportProgress {
  done: number
  total: number
}

/** What a build wrote: its data rows (the header not counted), its bytes and their SHA-256 (hex). */
export interface ExportResult {
  rows: number
  bytes: number
  sha256: string
}

/** Accounts read at once. */
const ACCOUNT_PAGE = 100
/** Bytes gathered before a write. */
const WRITE_CHUNK = 64 * 1024

/** The columns of a journal export (the fiat pair only with a currency). */
export function journalFields(currency: string | null): string[] {
  return [
    'date',
    'period',
    'from',
    'partial',
    'account_id',
    'entry',
    'movement',
    'ledger_account',
    'ledger_account_name',
    'debit_eth',
    'credit_eth',
    'debit_wei',
    'credit_wei',
    ...(currency ? [`debit_${currency}`, `credit_${currency}`] : []),
    'report_versions',
    'data_as_of',
    'memo',
  ]
}

/** The columns of a records export: the organization summary's CSV (`group_by`) columns. */
export function recordsFields(spec: Pick<ExportSpec, 'apiVersion' | 'currency'>): string[] {
  return [
    ...PERIOD_HEAD_FIELDS,
    'account_id',
    ...periodFields(spec.apiVersion, 'lseth', spec.currency ?? undefined),
  ]
}

/** Refuses a spec the API would refuse (InvalidInputError: not worth a retry). */
function checkSpec(spec: ExportSpec): void {
  parseDateOnly(spec.from, 'from')
  parseDateOnly(spec.to, 'to')
  const bad = (message: string) => new InvalidInputError(message, { details: { spec } })
  if (spec.from > spec.to) throw bad('from must not be after to')
  if (!GRANULARITIES.includes(spec.granularity)) throw bad('granularity must be day, month, quarter or year')
  if (spec.currency !== null && spec.currency !== 'usd' && spec.currency !== 'eur')
    throw bad('currency must be usd or eur')
  if (spec.kind !== 'records' && spec.kind !== 'journal') throw bad('kind must be records or journal')
  if (spec.apiVersion !== 'v1' && spec.apiVersion !== 'v0') throw bad('apiVersion must be v1 or v0')
}

/** A stored price as a rollup's (null: missing). */
function answerOf(price: Price | undefined): PriceAnswer | null {
  return price && 'answer' in price ? { answer: price.answer, decimals: price.decimals } : null
}

/** What the rollup days of every account share: the reports (the one before the range first), rates, prices. */
interface Reads {
  priced: ReportDay[]
  inRange: Set<string>
  rates: Map<string, ReportRatesRow>
  price: (epoch: string) => PriceAnswer | null
  currency: string | null
}

/**
 * An account's rollup days from its records (oldest first) as the API's account summary makes them (engine
 * `storedRollupDays`): the wallets' records of each report state its rates when asked for (records exports).
 */
function accountDays(
  rows: readonly AccountRecordRow[],
  reads: Reads,
  walletsOn?: Map<string, WalletRatesRow[]>,
): RollupDay[] {
  const position = new Map(reads.priced.map((d, i) => [d.report_epoch, i]))
  return storedRollupDays({
    rows,
    reports: reads.priced,
    inRange: reads.inRange,
    factsOf: (epoch) => reads.rates.get(epoch),
    walletsOf: (epoch) => walletsOn?.get(epoch),
    pricesOf: (epoch) => {
      if (!reads.currency) return {}
      const before = reads.priced[(position.get(epoch) ?? 0) - 1]
      return { price: reads.price(epoch), opening_price: before ? reads.price(before.report_epoch) : null }
    },
  })
}

/** A journal line as CSV cells, with where its amounts come from. */
function journalCells(
  line: JournalLine,
  currency: string | null,
  source: { versions: string; asOf: string },
) {
  const fiat = (v: bigint | null) => (v === null ? null : formatUnits(v, FIAT_DECIMALS))
  return {
    ...line,
    partial: String(line.partial),
    debit_eth: formatUnits18(line.debit_wei),
    credit_eth: formatUnits18(line.credit_wei),
    debit_wei: line.debit_wei.toString(),
    credit_wei: line.credit_wei.toString(),
    ...(currency
      ? { [`debit_${currency}`]: fiat(line.debit_fiat), [`credit_${currency}`]: fiat(line.credit_fiat) }
      : {}),
    report_versions: source.versions,
    data_as_of: source.asOf,
  }
}

/** The report versions a period's amounts come from, and the latest instant one of them became visible. */
function sourceOf(period: RolledPeriod, priced: readonly ReportDay[]) {
  const days = priced.filter((d) => d.date >= period.from && d.date <= period.to)
  const versions = [...new Set(days.map((d) => d.visible_version))].sort((a, b) => a - b)
  const asOf = new Date(Math.max(0, ...days.map((d) => d.data_as_of.getTime())))
  return { versions: versions.join(' '), asOf: asOf.toISOString() }
}

/**
 * Builds an export's CSV into `out` (not ended: the caller ends or keeps it) and returns its rows, bytes and
 * SHA-256. Reads a page of ACCOUNT_PAGE accounts at a time (their account records, and for `records` each
 * account's wallet records' rates, for the rates the API's account summary states), writes in chunks of 64 KiB and waits for 'drain'
 * when `out` asks to. `onProgress` is called after each page, in accounts. Throws InvalidInputError on a spec
 * the API refuses (unknown ledger account, bad dates).
 *
 * @example
 * const { rows, sha256 } = await buildExport(repos, { ...spec, kind: 'journal' }, fs.createWriteStream(file))
 */
export async function buildExport(
  repos: Repos,
  spec: ExportSpec,
  out: NodeJS.WritableStream | Writable,
  onProgress?: (p: ExportProgress) => void,
): Promise<ExportResult> {
  checkSpec(spec)
  const names: Record<JournalLedgerKey, string> = journalAccountNames(spec.journalAccounts ?? {})
  const all = (await repos.reports.visibleDays()).filter((d) => d.chain_id === spec.chainId)
  const days = all.filter((d) => d.date >= spec.from && d.date <= spec.to)
  const before = days.length > 0 ? all.filter((d) => d.date < spec.from).at(-1) : undefined
  const priced = before ? [before, ...days] : days
  const prices = spec.currency ? await repos.prices.ofDays(priced) : undefined
  const currency = spec.currency as 'usd' | 'eur' | null
  const reads: Reads = {
    priced,
    inRange: new Set(days.map((d) => d.report_epoch)),
    rates: new Map((await repos.exportReads.reportRates(priced)).map((r) => [r.report_epoch, r])),
    price: (epoch) => (currency ? answerOf(prices?.get(epoch)?.[currency]) : null),
    currency,
  }
  const ids =
    spec.accountIds === null
      ? await repos.exportReads.accountIds(spec.orgId)
      : await repos.exportReads.ownAccountIds(spec.orgId, spec.accountIds)

  const hash = createHash('sha256')
  let bytes = 0
  let rows = 0
  let pending = ''
  const flush = async () => {
    if (pending === '') return
    const chunk = Buffer.from(pending, 'utf8')
    pending = ''
    hash.update(chunk)
    bytes += chunk.length
    if (!out.write(chunk)) await once(out as Writable, 'drain')
  }
  const emit = async (line: string) => {
    pending += line
    if (pending.length >= WRITE_CHUNK) await flush()
  }

  const fields = spec.kind === 'journal' ? journalFields(spec.currency) : recordsFields(spec)
  await emit(csvLine(fields, Object.fromEntries(fields.map((f) => [f, f]))))
  for (let at = 0; at < ids.length; at += ACCOUNT_PAGE) {
    const page = ids.slice(at, at + ACCOUNT_PAGE)
    const records = await repos.exportReads.accountRecords(priced, page)
    const byAccount = new Map<string, AccountRecordRow[]>()
    for (const row of records) {
      const list = byAccount.get(row.account_id) ?? []
      list.push(row)
      byAccount.set(row.account_id, list)
    }
    for (const id of page) {
      const own = byAccount.get(id) ?? []
      if (own.length === 0) continue
      let walletsOn: Map<string, WalletRatesRow[]> | undefined
      if (spec.kind === 'records') {
        walletsOn = new Map()
        for (const w of await repos.exportReads.walletRates(priced, id)) {
          const list = walletsOn.get(w.report_epoch) ?? []
          list.push(w)
          walletsOn.set(w.report_epoch, list)
        }
      }
      for (const period of rollUp(accountDays(own, reads, walletsOn), spec.from, spec.to, spec.granularity)) {
        if (spec.kind === 'records') {
          const cells = {
            ...periodHeadCells(periodHead(period)),
            account_id: id,
            ...presentRolledPeriod(period, spec.apiVersion, 'lseth', spec.currency ?? undefined),
          }
          await emit(csvLine(fields, cells))
          rows += 1
          continue
        }
        const source = sourceOf(period, priced)
        const options = spec.currency ? { names, currency: spec.currency } : { names }
        for (const line of journalLines({ accountId: id, period }, options)) {
          await emit(csvLine(fields, journalCells(line, spec.currency, source)))
          rows += 1
        }
      }
    }
    onProgress?.({ done: Math.min(at + ACCOUNT_PAGE, ids.length), total: ids.length })
  }
  await flush()
  if (ids.length === 0) onProgress?.({ done: 0, total: 0 })
  return { rows, bytes, sha256: hash.digest('hex') }
}
