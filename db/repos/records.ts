import type { Knex } from 'knex'
import { type Address, ZERO_ADDRESS } from '../../common/address.ts'
import { bulkWriteText, type CopyOut, copyOut } from '../bulk.ts'
import type { Db, Queryable } from '../index.ts'
import {
  FEE_AMOUNT_COLUMNS,
  FEE_RATE_COLUMNS,
  WALLET_AMOUNT_COLUMNS,
  WALLET_RECORD_COLUMNS,
  WALLET_TOTAL_COLUMNS,
} from '../records/columns.ts'

/** One version of one day's records. */
export interface DayKey {
  chainId: number
  epoch: string
  version: number
}

/** A range of lower-case addresses: lo <= address < hi (hi null: no upper bound). */
export interface AddressRange {
  lo: string
  hi: string | null
}

/** A position in the chain: transfers before a report are those at a lower (block, tx index). */
export interface ChainPosition {
  block: string
  txIndex: number
}

/** An ingested oracle report with its position (numeric columns as decimal strings). */
export interface StoredReport {
  chain_id: number
  block_number: string
  log_index: number
  tx_index: number
  block_hash: string
  block_time: Date
  epoch: string
  validators_count: number
  /** Null for a report before River 1.0.0 (`report_shape` 'legacy'): it had no stopped validators. */
  stopped_validator_count_per_operator: number[] | null
  trace_rewards: string
  trace_pulled_coverage_funds: string
  trace_pulled_redeem_manager_exceeding_eth: string
  total_underlying_supply: string
  total_supply: string
  fee_shares: string
  global_fee_bps: number
  /** 'v1' (ProcessedConsensusLayerReport) or 'legacy' (ConsensusLayerDataUpdate, before River 1.0.0). */
  report_shape: 'v1' | 'legacy'
  /** River's U and S right before the report's transaction (null on rows ingested before migration 007). */
  pool_before_underlying: string | null
  pool_before_supply: string | null
  /** RewardsEarned of the report transaction (null without a fee mint; only from `report()`). */
  fee_mint_underlying?: string | null
  fee_mint_supply_before?: string | null
  fee_mint_supply_after?: string | null
}

/** What the next day reads of a wallet's record (`walletTotalsText`): address, balance, cumulative totals. */
export const PREVIOUS_ROW_COLUMNS = ['address', 'balance_lseth', ...WALLET_TOTAL_COLUMNS] as const

/** A wallet's LsETH movements over a day's period (decimal strings of shares). */
export interface PeriodFlowRow {
  address: string
  /** Net movement over the whole period, the report transaction included. */
  delta: string
  /** Net movement of the report transaction alone (its fee mint, its burns): part of `delta`. */
  report_delta: string
  mints: string
  burns: string
}

/** LsETH minted (from 0x0) and burned (to 0x0) by the whole protocol over a stretch of the chain, as stored. */
export interface MintsAndBurns {
  mints: string
  burns: string
}

/** Who a wallet belonged to at a report's block time. */
export interface AttributionRow {
  address: string
  account_id: string
  org_id: string
  originator_org_id: string
  on_platform: boolean
  /** The account's target fee rate in force then (exact decimal, trailing zeros trimmed), if any. */
  target_fee_rate: string | null
}

/** What a shard of a run wrote. */
export interface ShardResult {
  shard: number
  wallets: number
  content_hash: string
  fee_summary: unknown
  duration_ms: number
}

/** The day-level tables `sameDayLevel` compares between two versions of a day. */
const DAY_LEVEL_COMPARED = ['protocol_records', 'fee_records', 'operator_fee_records', 'day_reconciliations']

// COPY takes no parameters: every literal in its query is checked
const addressLiteral = (value: string) => {
  if (!/^0x[0-9a-f]{40}$/.test(value)) throw new Error(`not an address range bound: ${value}`)
  return `'${value}'`
}
const integerLiteral = (value: string | number) => {
  if (!/^\d+$/.test(String(value))) throw new Error(`not a day key: ${value}`)
  return String(value)
}

function inRange(column: string, range: AddressRange): { sql: string; bindings: string[] } {
  return range.hi === null
    ? { sql: `${column} >= ?`, bindings: [range.lo] }
    : { sql: `${column} >= ? and ${column} < ?`, bindings: [range.lo, range.hi] }
}

/**
 * The LsETH minted (from 0x0) and burned (to 0x0) over transfers at positions (after, upTo] (after null: since
 * the first stored transfer), or with `only`, by the transaction at `upTo` alone. Returns the SQL (one row:
 * `mints`, `burns` as decimal text) and its bindings.
 */
function mintsAndBurnsQuery(
  chainId: number,
  window: { after: ChainPosition | null; upTo: ChainPosition; only?: boolean },
): [string, Knex.RawBinding[]] {
  const sums = `select coalesce(sum(case when from_address = ? then value else 0 end), 0)::text as mints,
      coalesce(sum(case when to_address = ? then value else 0 end), 0)::text as burns
    from lseth_transfers where chain_id = ?`
  if (window.only) {
    return [
      `${sums} and block_number = ? and tx_index = ?`,
      [ZERO_ADDRESS, ZERO_ADDRESS, chainId, window.upTo.block, window.upTo.txIndex],
    ]
  }
  const fromSql = window.after ? 'and block_number >= ? and (block_number, tx_index) > (?, ?)' : ''
  const fromBindings = window.after ? [window.after.block, window.after.block, window.after.txIndex] : []
  return [
    `${sums} ${fromSql} and block_number <= ? and (block_number, tx_index) <= (?, ?)
       and (from_address = ? or to_address = ?)`,
    [
      ZERO_ADDRESS,
      ZERO_ADDRESS,
      chainId,
      ...fromBindings,
      window.upTo.block,
      window.upTo.block,
      window.upTo.txIndex,
      ZERO_ADDRESS,
      ZERO_ADDRESS,
    ],
  ]
}

/** '0.080000000000000000' -> '0.08' (numeric columns come back padded to their scale). */
function trimDecimal(value: string): string {
  if (!value.includes('.')) return value
  const trimmed = value.replace(/0+$/, '').replace(/\.$/, '')
  return trimmed === '' || trimmed === '-0' ? '0' : trimmed
}

/**
 * The period flows query (see `periodFlows`): for an address range through the address indexes, or for every
 * address through the primary key's block range. Returns the SQL and its bindings.
 */
function flowsQuery(
  chainId: number,
  window: { after: ChainPosition | null; upTo: ChainPosition },
  range: AddressRange | null,
  burnAddresses: readonly Address[],
): [string, Knex.RawBinding[]] {
  const afterSql = window.after ? 'and t.block_number >= ? and (t.block_number, t.tx_index) > (?, ?)' : ''
  const afterBindings = window.after ? [window.after.block, window.after.block, window.after.txIndex] : []
  const position = {
    sql: `t.chain_id = ? ${afterSql} and t.block_number <= ? and (t.block_number, t.tx_index) <= (?, ?)`,
    bindings: [chainId, ...afterBindings, window.upTo.block, window.upTo.block, window.upTo.txIndex],
  }
  // the report transaction's own transfers
  const inReportTx = 't.block_number = ? and t.tx_index = ?'
  const reportTx = [window.upTo.block, window.upTo.txIndex]
  const all = { sql: 'true', bindings: [] as string[] }
  const to = range ? inRange('t.to_address', range) : all
  const from = range ? inRange('t.from_address', range) : all
  const burns = [ZERO_ADDRESS, ...burnAddresses]
  return [
    `select address, sum(delta)::text as delta, sum(report_delta)::text as report_delta,
         sum(mints)::text as mints, sum(burns)::text as burns from (
       select t.to_address as address, t.value as delta,
         case when ${inReportTx} then t.value else 0 end as report_delta,
         case when t.from_address = ? then t.value else 0 end as mints, 0 as burns
       from lseth_transfers t where ${position.sql} and ${to.sql}
       union all
       select t.from_address as address, -t.value as delta,
         case when ${inReportTx} then -t.value else 0 end as report_delta, 0 as mints,
         case when t.to_address = any(?) then t.value else 0 end as burns
       from lseth_transfers t where ${position.sql} and ${from.sql}
     ) m where address <> ? group by address order by address collate "C"`,
    [
      ...reportTx,
      ZERO_ADDRESS,
      ...position.bindings,
      ...to.bindings,
      ...reportTx,
      burns,
      ...position.bindings,
      ...from.bindings,
      ZERO_ADDRESS,
    ],
  ]
}

/**
 * Computed daily records: the inputs a day reads (reports, the previous day's totals, the period's
 * transfers, attribution as of the report) and the bulk writes of a run's records.
 */
export function createRecordsRepo(db: Queryable) {
  return {
    /** The ingested report of an epoch. */
    async report(chainId: number, epoch: string): Promise<StoredReport | undefined> {
      return db('oracle_reports as r')
        .leftJoin('rewards_earned as e', function () {
          this.on('e.chain_id', 'r.chain_id').andOn('e.tx_hash', 'r.tx_hash')
        })
        .select(
          'r.*',
          'e.new_total_underlying_balance as fee_mint_underlying',
          'e.old_total_supply as fee_mint_supply_before',
          'e.new_total_supply as fee_mint_supply_after',
        )
        .where('r.chain_id', chainId)
        .whereRaw('r.epoch::bigint = ?', [epoch])
        .first()
    },

    /** Up to `limit` reports before a position, newest first. */
    async reportsBefore(
      chainId: number,
      position: { block: string; logIndex: number },
      limit: number,
    ): Promise<StoredReport[]> {
      return db('oracle_reports')
        .where({ chain_id: chainId })
        .whereRaw('(block_number, log_index) < (?, ?)', [position.block, position.logIndex])
        .orderBy([
          { column: 'block_number', order: 'desc' },
          { column: 'log_index', order: 'desc' },
        ])
        .limit(limit)
    },

    /** Every fee schedule row (validated by the engine). */
    async feeSchedules(): Promise<unknown[]> {
      const rows: {
        id: string
        model: string
        effective_from: Date
        shares: unknown
        note: string | null
      }[] = await db('fee_schedules').orderBy('effective_from')
      return rows.map((r) => ({
        id: r.id,
        model: r.model,
        effective_from: r.effective_from.toISOString().replace('.000Z', 'Z'),
        shares: r.shares,
        ...(r.note ? { note: r.note } : {}),
      }))
    },

    /**
     * Balances and totals of a version of a day, for an address range, as COPY text rows of
     * `PREVIOUS_ROW_COLUMNS` in address order (read them with `createCopyRows`), no object per row. The
     * order is the primary key's (no sort): addresses are stored as lower-case hex of one length, which every
     * collation orders as bytes (a reader that merges them checks it). They stream (COPY TO on a connection of
     * its own; on PGlite a cursor read a page at a time, db/pglite-bulk.ts) until `close()`.
     */
    async openWalletTotals(key: DayKey, range: AddressRange): Promise<CopyOut> {
      const columns = PREVIOUS_ROW_COLUMNS.join(', ')
      const upper = range.hi === null ? '' : ` and address < ${addressLiteral(range.hi)}`
      return copyOut(
        db as Db,
        `select ${columns} from wallet_records
         where chain_id = ${integerLiteral(key.chainId)} and report_epoch = ${integerLiteral(key.epoch)}
           and version = ${integerLiteral(key.version)} and address >= ${addressLiteral(range.lo)}${upper}
         order by address`,
      )
    },

    /**
     * The canonical lines of a stored version's wallet records, what its content hash covers
     * (jobs/days/content-hash.ts): `WALLET_RECORD_COLUMNS` without `version`, COPY text, in address order,
     * streamed as `openWalletTotals` streams (call `close()` always).
     */
    async openContentLines(key: DayKey): Promise<CopyOut> {
      const columns = WALLET_RECORD_COLUMNS.filter((c) => c !== 'version').join(', ')
      return copyOut(
        db as Db,
        `select ${columns} from wallet_records
         where chain_id = ${integerLiteral(key.chainId)} and report_epoch = ${integerLiteral(key.epoch)}
           and version = ${integerLiteral(key.version)}
         order by address`,
      )
    },

    /**
     * Whether version `other` of the day of `key` holds the same day-level records as `key`'s version: the
     * protocol, fee, operator fee and reconciliation rows, compared whole but for their version (the account
     * records are sums of the wallet records, which the content hash compares).
     */
    async sameDayLevel(key: DayKey, other: number): Promise<boolean> {
      const rows = (table: string) =>
        `select to_jsonb(t) - 'version' from ${table} t where chain_id = ? and report_epoch = ? and version = ?`
      const differences = DAY_LEVEL_COMPARED.flatMap((table) => [
        `(select count(*) from (${rows(table)} except all ${rows(table)}) x)`,
        `(select count(*) from (${rows(table)} except all ${rows(table)}) x)`,
      ])
      const [row] = (
        await db.raw(
          `select ${differences.join(' + ')} as differences`,
          DAY_LEVEL_COMPARED.flatMap(() => [
            ...[key.chainId, key.epoch, key.version, key.chainId, key.epoch, other],
            ...[key.chainId, key.epoch, other, key.chainId, key.epoch, key.version],
          ]),
        )
      ).rows
      return Number(row?.differences) === 0
    },

    /**
     * Net LsETH movement, mints (from 0x0) and burns (to 0x0 or to a redeem address) of each address in
     * `range` over transfers at positions (after, upTo] (after null: since the first stored transfer): the
     * previous report's transaction excluded, this report's included. `report_delta` is the part of `delta`
     * moved by the transaction at `upTo` itself (the report's fee mint and burns). Reads through the address
     * indexes: for the chain's first day, whose period is the whole history before it.
     */
    async periodFlows(
      chainId: number,
      window: { after: ChainPosition | null; upTo: ChainPosition },
      range: AddressRange,
      burnAddresses: readonly Address[],
    ): Promise<PeriodFlowRow[]> {
      return (await db.raw(...flowsQuery(chainId, window, range, burnAddresses))).rows
    },

    /**
     * `periodFlows` of every address at once, in byte order of the address: one read of the period's
     * transfers by block range (the primary key), so its cost follows the period's transfers, not the
     * history before them.
     */
    async dayFlows(
      chainId: number,
      window: { after: ChainPosition | null; upTo: ChainPosition },
      burnAddresses: readonly Address[],
    ): Promise<PeriodFlowRow[]> {
      return (await db.raw(...flowsQuery(chainId, window, null, burnAddresses))).rows
    },

    /**
     * Where a run that does not reconcile went wrong, read again from the store: up to `limit` wallets (by
     * address) whose balance in run `key` is not their balance in `previous` (the predecessor's visible
     * version; null for a chain's first day) plus their net transfers over `window` as stored now (a wallet
     * with no row counts as 0), and the sum of `previous`'s balances. Reads every row of both days: call it on
     * a failure only.
     */
    async reconciliationSuspects(
      key: DayKey,
      previous: DayKey | null,
      window: { after: ChainPosition | null; upTo: ChainPosition },
      limit = 5,
    ): Promise<{
      wallets: { address: string; stored: string | null; expected: string }[]
      previousBalances: string | null
    }> {
      const [flowsSql, flowsBindings] = flowsQuery(key.chainId, window, null, [])
      const version = (k: DayKey | null) => (k ? [k.chainId, k.epoch, k.version] : [key.chainId, -1, -1])
      const wallets = await db.raw(
        `with flows as (${flowsSql}),
           prev as (select address, balance_lseth from wallet_records
             where chain_id = ? and report_epoch = ? and version = ?),
           cur as (select address, balance_lseth from wallet_records
             where chain_id = ? and report_epoch = ? and version = ?),
           compared as (
             select coalesce(c.address, p.address, f.address) as address, c.balance_lseth as stored,
               coalesce(p.balance_lseth, 0) + coalesce(f.delta::numeric, 0) as expected
             from cur c full join prev p on p.address = c.address
               full join flows f on f.address = coalesce(c.address, p.address))
         select address, stored::text as stored, expected::text as expected from compared
         where coalesce(stored, 0) <> expected order by address limit ?`,
        [...flowsBindings, ...version(previous), ...version(key), limit],
      )
      const [sum] = previous
        ? (
            await db.raw(
              `select sum(balance_lseth)::text as balances from wallet_records
               where chain_id = ? and report_epoch = ? and version = ?`,
              version(previous),
            )
          ).rows
        : [undefined]
      return { wallets: wallets.rows, previousBalances: sum?.balances ?? null }
    },

    /**
     * What a run's finalization reads besides the day's inputs, in one statement: the shards the run has
     * written (by shard number), the funded validators per operator at the report (by operator index), the
     * LsETH minted (from 0x0) and burned (to 0x0) by the whole protocol over the report's period
     * (`window`: positions (after, upTo]) and by the report's own transaction (its fee mint and burns).
     */
    async finalizationReads(
      key: DayKey,
      report: { block: string; logIndex: number; txIndex: number },
      window: { after: ChainPosition | null; upTo: ChainPosition },
    ): Promise<{
      shards: ShardResult[]
      operators: { operator_index: number; funded: number }[]
      flows: MintsAndBurns
      ownFlows: MintsAndBurns
    }> {
      const [flowsSql, flowsBindings] = mintsAndBurnsQuery(key.chainId, window)
      const [ownSql, ownBindings] = mintsAndBurnsQuery(key.chainId, {
        after: null,
        upTo: { block: report.block, txIndex: report.txIndex },
        only: true,
      })
      const result = await db.raw(
        `select
           (select coalesce(json_agg(json_build_object('shard', shard, 'wallets', wallets,
               'content_hash', content_hash, 'fee_summary', fee_summary, 'duration_ms', duration_ms)
               order by shard), '[]'::json)
            from day_shards where chain_id = ? and report_epoch = ? and version = ?) as shards,
           (select coalesce(json_agg(json_build_object('operator_index', operator_index, 'funded', funded)
               order by operator_index), '[]'::json)
            from report_operators where chain_id = ? and block_number = ? and log_index = ?) as operators,
           (select row_to_json(f) from (${flowsSql}) f) as flows,
           (select row_to_json(o) from (${ownSql}) o) as own_flows`,
        [
          key.chainId,
          key.epoch,
          key.version,
          key.chainId,
          report.block,
          report.logIndex,
          ...flowsBindings,
          ...ownBindings,
        ],
      )
      const row = result.rows[0]
      return { shards: row.shards, operators: row.operators, flows: row.flows, ownFlows: row.own_flows }
    },

    /**
     * Registered wallets of `range` as they stood at chain time `at` (registered before it), each with the
     * target fee rate of its account in force at `at` (the latest before it; null without one).
     */
    async attributions(at: Date, range: AddressRange): Promise<AttributionRow[]> {
      const where = inRange('w.address', range)
      const rows: AttributionRow[] = (
        await db.raw(
          `select w.address, w.account_id, w.org_id, w.originator_org_id,
             (w.off_platform_from is null or w.off_platform_from >= ?) as on_platform,
             t.target_fee_rate
           from wallets w
           left join lateral (
             select d.target_fee_rate::text as target_fee_rate from discount_rates d
             where d.account_id = w.account_id and d.effective_from < ?
             order by d.effective_from desc, d.id desc limit 1
           ) t on true
           where w.attributed_from < ? and ${where.sql}`,
          [at, at, at, ...where.bindings],
        )
      ).rows
      for (const row of rows) {
        if (row.target_fee_rate != null) row.target_fee_rate = trimDecimal(row.target_fee_rate)
      }
      return rows
    },

    /**
     * Writes the wallet records of consecutive shards (their address range `range`), given as COPY text lines of
     * `WALLET_RECORD_COLUMNS` (chunks of whole lines), replacing what an earlier attempt wrote in the range,
     * and records what each shard wrote (`results`, asked with the rows written once they are in: their hashes
     * and fee summaries are known then), in one transaction of its own (call it on repositories of the pool,
     * not of a transaction). Returns the rows written.
     */
    async writeWalletShards(
      key: DayKey,
      range: AddressRange,
      chunks: AsyncIterable<string> | Iterable<string>,
      results: (rows: number) => readonly ShardResult[],
    ): Promise<number> {
      const where = inRange('address', range)
      return bulkWriteText(
        db as Db,
        'wallet_records',
        WALLET_RECORD_COLUMNS,
        chunks,
        {
          sql: `delete from wallet_records where chain_id = ? and report_epoch = ? and version = ? and ${where.sql}`,
          bindings: [key.chainId, key.epoch, key.version, ...where.bindings],
        },
        (rows) => saveShardsStatement(key, results(rows)),
      )
    },

    /**
     * Replaces a run's day-level records in one round trip: deletes what an earlier attempt wrote, then
     * inserts the account records (exact sums of the run's wallets, grouped by the account of each), the
     * protocol record, the platform / originator / all fee records, the reconciliation (residuals in wei)
     * and the operator fee records. The statements go as one script with their values written in (knex's
     * quoting), so call it in the finalizing transaction. Amounts as bigint or decimal strings.
     */
    async writeDayLevel(
      key: DayKey,
      records: {
        engineVersion: string
        protocol: Record<string, unknown>
        fees: Record<string, unknown>[]
        reconciliation: {
          holders: number
          shares_residual: bigint
          gross_residual: bigint
          fees_residual: bigint
          rewards_residual: bigint
        }
        operators: Record<string, unknown>[]
      },
    ): Promise<void> {
      const keyColumns = { chain_id: key.chainId, report_epoch: key.epoch, version: key.version }
      const statements: Knex.Sql[] = [
        clearDayLevelQuery(db, key),
        accountRecordsQuery(db, key, records.engineVersion),
        db('protocol_records')
          .insert({ ...stringify(records.protocol), ...keyColumns })
          .toSQL(),
        ...(records.fees.length > 0
          ? [db('fee_records').insert(feeRecordRows(key, records.fees)).toSQL()]
          : []),
        db('day_reconciliations')
          .insert({ ...stringify(records.reconciliation), ...keyColumns })
          .toSQL(),
      ]
      if (records.operators.length > 0) {
        const rows = records.operators.map((row) => ({ ...stringify(row), ...keyColumns }))
        statements.push(db('operator_fee_records').insert(rows).toSQL())
      }
      await db.raw(statements.map((q) => db.raw(q.sql, [...q.bindings]).toQuery()).join(';\n'))
    },
  }
}

/** The records repository `createRecordsRepo` returns. */
export type RecordsRepo = ReturnType<typeof createRecordsRepo>

/** The upsert of shards' rows in `day_shards` (what each wrote), as one statement with its bindings. */
function saveShardsStatement(key: DayKey, results: readonly ShardResult[]) {
  const columns = ['wallets', 'content_hash', 'fee_summary', 'duration_ms']
  return {
    sql: `insert into day_shards (chain_id, report_epoch, version, shard, ${columns.join(', ')})
      values ${results.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
      on conflict (chain_id, report_epoch, version, shard)
      do update set ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}`,
    bindings: results.flatMap((r) => [
      key.chainId,
      key.epoch,
      key.version,
      r.shard,
      r.wallets,
      r.content_hash,
      JSON.stringify(r.fee_summary),
      r.duration_ms,
    ]),
  }
}

/** The delete of a run's day-level records (account, protocol, fee, operator, reconciliation): one statement. */
function clearDayLevelQuery(db: Queryable, key: DayKey): Knex.Sql {
  const tables = [
    'account_records',
    'protocol_records',
    'fee_records',
    'operator_fee_records',
    'day_reconciliations',
  ]
  const deletes = tables.map(
    (table, i) => `d${i} as (delete from ${table} where chain_id = ? and report_epoch = ? and version = ?)`,
  )
  return db
    .raw(
      `with ${deletes.join(', ')} select 1`,
      tables.flatMap(() => [key.chainId, key.epoch, key.version]),
    )
    .toSQL()
}

/** The insert of a run's account records: exact sums of its wallets' amounts, by the account of each. */
function accountRecordsQuery(db: Queryable, key: DayKey, engineVersion: string): Knex.Sql {
  const sums = WALLET_AMOUNT_COLUMNS.map((c) => `sum(${c})`).join(', ')
  return db
    .raw(
      `insert into account_records (chain_id, report_epoch, version, account_id, date, org_id, wallets,
         ${WALLET_AMOUNT_COLUMNS.join(', ')}, engine_version)
       select chain_id, report_epoch, version, account_id, min(date), min(org_id), count(*), ${sums}, ?
       from wallet_records where chain_id = ? and report_epoch = ? and version = ? and account_id is not null
       group by chain_id, report_epoch, version, account_id`,
      [engineVersion, key.chainId, key.epoch, key.version],
    )
    .toSQL()
}

/**
 * Fee record rows of a run, as stored (one insert: `writeDayLevel` writes their values into its script, so
 * no statement's bound parameters limit how many).
 */
function feeRecordRows(key: DayKey, rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const columns = [
    'kind',
    'org_id',
    'date',
    'fee_model',
    'wallets',
    ...FEE_AMOUNT_COLUMNS,
    ...FEE_RATE_COLUMNS,
  ]
  return rows.map((row) => {
    const out: Record<string, unknown> = {
      chain_id: key.chainId,
      report_epoch: key.epoch,
      version: key.version,
      engine_version: row.engine_version,
    }
    for (const c of columns) out[c] = typeof row[c] === 'bigint' ? String(row[c]) : row[c]
    return out
  })
}

function stringify(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(row)) out[k] = typeof v === 'bigint' ? v.toString() : v
  return out
}
