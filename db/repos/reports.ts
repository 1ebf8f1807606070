import type { Queryable } from '../index.ts'
import {
  type FEE_AMOUNT_COLUMNS,
  type FEE_RATE_COLUMNS,
  type WALLET_AMOUNT_COLUMNS,
  type WALLET_RATE_COLUMNS,
  WALLET_RECORD_COLUMNS,
} from '../records/columns.ts'
import { arrayLiteral, namedStatement } from '../statements.ts'
import { isUuid } from './accounts.ts'

/**
 * The report that answers for a date: the latest report of that UTC date whose records are visible, with
 * the state of the pool after it (from its protocol record). Every reporting read starts here.
 */
export interface ReportDay {
  chain_id: number
  report_epoch: string
  /** UTC date of the report's block, YYYY-MM-DD. */
  date: string
  block_number: string
  block_time: Date
  /** The day's status: a day being recomputed still serves its visible version. */
  status: 'pending' | 'computing' | 'computed' | 'failed'
  visible_version: number
  content_hash: string | null
  /** When this version became visible (the restatement log's visible_from): what the answer is as of. */
  data_as_of: Date
  /** U after the report (wei), S after the report (shares) and rate_k: from the protocol record. */
  total_underlying_eth: string
  total_lseth_supply: string
  conversion_rate: string
}

type AmountColumn = (typeof WALLET_AMOUNT_COLUMNS)[number]
/** A column of `wallet_records`. */
export type WalletRecordColumn = (typeof WALLET_RECORD_COLUMNS)[number]
type WalletRateColumn = (typeof WALLET_RATE_COLUMNS)[number]

/** A stored wallet record: amounts as decimal strings of wei (share units), rates as decimal strings. */
export type WalletRecordRow = {
  report_epoch: string
  address: string
  date: string
  account_id: string | null
  org_id: string | null
  originator_org_id: string | null
  on_platform: boolean
  target_fee_rate: string | null
  fee_model: 'v0' | 'v3'
  fee_schedule_id: string
  conversion_rate: string
  previous_conversion_rate: string
  gross_protocol_fee_rate: string
  discount_rate: string
  engine_version: string
} & Record<AmountColumn, string> &
  Record<WalletRateColumn, string>

/** A stored account record: the sums of its wallets' amounts. */
export type AccountRecordRow = {
  report_epoch: string
  account_id: string
  date: string
  org_id: string | null
  wallets: number
} & Record<AmountColumn, string>

/** A version of a day in the restatement log. */
export interface ReportVersionRow {
  version: number
  content_hash: string
  engine_version: string
  reason: string
  previous_version: number | null
  visible_from: Date
  visible_until: Date | null
}

/** A stored protocol record. */
export interface ProtocolRecordRow {
  report_epoch: string
  date: string
  block_time: Date
  block_number: string
  total_protocol_mints_lseth: string
  total_protocol_burns_lseth: string
  total_protocol_active_keys_count: number
  rewards_eth: string
  gross_fee_rate: string
  gross_fee_lseth: string
  conversion_rate: string
  total_lseth_supply: string
  total_underlying_eth: string
  a_srr_7d: string | null
}

/** Fee record kinds: by the org owning the account, by the wallet's originator, or the whole day. */
export type FeeKind = 'platform' | 'originator' | 'all'

/** A stored platform / originator / whole-day fee record. */
export type FeeRecordRow = {
  report_epoch: string
  kind: FeeKind
  org_id: string
  date: string
  fee_model: 'v0' | 'v3'
  wallets: number
} & Record<(typeof FEE_AMOUNT_COLUMNS)[number], string> &
  Record<(typeof FEE_RATE_COLUMNS)[number], string>

/** A stored operator fee record. */
export interface OperatorFeeRecordRow {
  report_epoch: string
  operator_id: string
  date: string
  active_validators: string
  operator_fees_eth: string
  operator_fees_rate: string
}

/** A rate observation for lots: one per date, the post-fee rate of that date's report. */
export interface DateRateRow {
  date: string
  report_epoch: string
  conversion_rate: string
}

/** The pool state an oracle report left (the projections' inputs). */
export interface ReportState {
  block_time: Date
  total_underlying_supply: string
  total_supply: string
  /** Null for a report before River 1.0.0 (no withdrawals: nothing skimmed). */
  validators_skimmed_balance: string | null
  trace_pulled_el_fees: string
}

/** A target fee rate set on an account. */
export interface DiscountHistoryRow {
  account_id: string
  target_fee_rate: string
  created_at: Date
  effective_from: Date
}

const DATE = (alias: string) => `to_char(${alias}.date, 'YYYY-MM-DD') as date`

/** Every column of a wallet record (`w`), its date as YYYY-MM-DD. */
const WALLET_RECORD_SELECT = [
  ...WALLET_RECORD_COLUMNS.filter((c) => c !== 'date').map((c) => `w.${c}`),
  DATE('w'),
].join(', ')

/** `walletRecordsOnDays`: records of addresses on (chain, epoch, version) triples, each with its currency. */
const recordsOnDays = namedStatement(
  'lsreport_records_on_days',
  `with v as (
    select chain_id, report_epoch, version, i
    from unnest(?::int[], ?::bigint[], ?::int[]) with ordinality as v(chain_id, report_epoch, version, i)
  )
  select v.i::int as v_i, (d.visible_version is not distinct from v.version) as v_current,
    ${WALLET_RECORD_SELECT}
  from v
  left join days d on d.chain_id = v.chain_id and d.report_epoch = v.report_epoch
  left join wallet_records w
    on w.chain_id = v.chain_id and w.report_epoch = v.report_epoch and w.version = v.version
    and w.address = any(?::text[])
  order by v.i, w.address`,
)

/**
 * Read-only queries of the reporting endpoints over the computed daily records. The read rule: a record is
 * visible only when its version is its day's `visible_version`; every query joins on it. A date is answered
 * by its latest report with visible records (two reports on one UTC date: the later one).
 *
 * The database serves one chain (as the redemption reads do); `chainId` narrows it when given.
 */
export function createReportsRepo(db: Queryable, options: { chainId?: number } = {}) {
  /**
   * Days with visible records, one per date (the latest of the date), with the pool state after it: the
   * versions visible now, or (`asOf`) the versions the restatement log says were visible at that instant.
   */
  const visibleDays = (asOf?: Date) =>
    db('days as d')
      [
        // now: the visible version, logged or not (one published outside the log has its computed_at); as of
        // an instant: the version the log says was visible then
        asOf === undefined ? 'leftJoin' : 'join'
      ]('report_versions as v', function () {
        this.on('v.chain_id', 'd.chain_id').andOn('v.report_epoch', 'd.report_epoch')
        if (asOf === undefined) this.andOn('v.version', 'd.visible_version')
      })
      .join('protocol_records as p', function () {
        this.on('p.chain_id', 'd.chain_id')
          .andOn('p.report_epoch', 'd.report_epoch')
          .andOn('p.version', asOf === undefined ? 'd.visible_version' : 'v.version')
      })
      .distinctOn('d.date')
      .select(
        'd.chain_id',
        'd.report_epoch',
        db.raw(DATE('d')),
        'd.block_number',
        'd.log_index',
        'd.block_time',
        asOf === undefined ? 'd.status' : db.raw(`'computed' as status`),
        asOf === undefined ? 'd.visible_version' : 'v.version as visible_version',
        asOf === undefined ? 'd.content_hash' : 'v.content_hash',
        db.raw(
          asOf === undefined
            ? 'coalesce(v.visible_from, d.computed_at, d.requested_at) as data_as_of'
            : 'v.visible_from as data_as_of',
        ),
        'p.total_underlying_eth',
        'p.total_lseth_supply',
        'p.conversion_rate',
      )
      .modify((q) => {
        if (asOf === undefined) q.whereNotNull('d.visible_version')
        else
          q.where('v.visible_from', '<=', asOf).where((w) =>
            w.whereNull('v.visible_until').orWhere('v.visible_until', '>', asOf),
          )
      })
      .modify((q) => {
        if (options.chainId !== undefined) q.where('d.chain_id', options.chainId)
      })
      .orderBy([
        { column: 'd.date' },
        { column: 'd.block_number', order: 'desc' },
        { column: 'd.log_index', order: 'desc' },
      ])

  const strip = (row: ReportDay & { log_index?: number }): ReportDay => {
    const { log_index: _logIndex, ...day } = row
    return day
  }

  /** Restricts a record query to one visible day. */
  const onDay = (alias: string, day: ReportDay) => ({
    [`${alias}.chain_id`]: day.chain_id,
    [`${alias}.report_epoch`]: day.report_epoch,
    [`${alias}.version`]: day.visible_version,
  })

  /** Restricts a record query to several visible days. */
  const onDays = (alias: string, days: readonly ReportDay[]) =>
    [
      `(${alias}.chain_id, ${alias}.report_epoch, ${alias}.version) in (${days.map(() => '(?, ?, ?)').join(', ')})`,
      days.flatMap((d) => [d.chain_id, d.report_epoch, d.visible_version]),
    ] as const

  return {
    /** Every date's report with visible records, by date (what `createReportDays` holds in memory). */
    async visibleDays(): Promise<ReportDay[]> {
      const rows = await visibleDays()
      return rows.map(strip)
    },

    /** Every date's report as it was visible at `asOf` (the restatement log), by date. */
    async daysAsOf(asOf: Date): Promise<ReportDay[]> {
      const rows = await visibleDays(asOf)
      return rows.map(strip)
    },

    /** The restatement log of a report, oldest version first. */
    async versions(day: Pick<ReportDay, 'chain_id' | 'report_epoch'>): Promise<ReportVersionRow[]> {
      return db('report_versions')
        .where({ chain_id: day.chain_id, report_epoch: day.report_epoch })
        .select(
          'version',
          'content_hash',
          'engine_version',
          'reason',
          'previous_version',
          'visible_from',
          'visible_until',
        )
        .orderBy('version')
    },

    /**
     * The records of `addresses` (lower case) on given versions of days, in one round trip and without the
     * query builder, each day with whether that version is still its day's visible one (`current`: a
     * version no longer visible may have lost its records, so its rows say nothing). Days in the order
     * given; rows by day and address. A named statement: planned once per connection.
     *
     * @example
     * const { current, rows } = await reports.walletRecordsOnDays([day], ['0xab...'])
     */
    async walletRecordsOnDays(
      days: readonly Pick<ReportDay, 'chain_id' | 'report_epoch' | 'visible_version'>[],
      addresses: readonly string[],
    ): Promise<{ current: boolean[]; rows: WalletRecordRow[] }> {
      if (days.length === 0) return { current: [], rows: [] }
      const found = await recordsOnDays.rows<WalletRecordRow & { v_i: number; v_current: boolean }>(db, [
        arrayLiteral(days.map((d) => d.chain_id)),
        arrayLiteral(days.map((d) => d.report_epoch)),
        arrayLiteral(days.map((d) => d.visible_version)),
        arrayLiteral(addresses),
      ])
      const current = days.map(() => false)
      const rows: WalletRecordRow[] = []
      for (const r of found) {
        if (r.v_current) current[r.v_i - 1] = true
        if (r.address !== null) rows.push(r)
      }
      return { current, rows }
    },

    /** Account records of one day for the given account ids, by account id. */
    async accountRecords(day: ReportDay, accountIds: string[]): Promise<AccountRecordRow[]> {
      if (accountIds.length === 0) return []
      return db('account_records as a')
        .select('a.*', db.raw(DATE('a')))
        .where(onDay('a', day))
        .whereIn('a.account_id', accountIds)
        .orderBy('a.account_id')
    },

    /** The wallet records attributed to the given accounts on one day, by account and address. */
    async accountWalletRecords(day: ReportDay, accountIds: string[]): Promise<WalletRecordRow[]> {
      if (accountIds.length === 0) return []
      return db('wallet_records as w')
        .select('w.*', db.raw(DATE('w')))
        .where(onDay('w', day))
        .whereIn('w.account_id', accountIds)
        .orderBy(['w.account_id', 'w.address'])
    },

    /** One account's records and its wallets' records over several days, by date. */
    async accountSeries(
      days: readonly ReportDay[],
      accountId: string,
    ): Promise<{ accounts: AccountRecordRow[]; wallets: WalletRecordRow[] }> {
      if (days.length === 0) return { accounts: [], wallets: [] }
      const [sql, bindings] = onDays('r', days)
      const [accounts, wallets] = await Promise.all([
        db('account_records as r')
          .select('r.*', db.raw(DATE('r')))
          .where('r.account_id', accountId)
          .whereRaw(sql, bindings)
          .orderBy(['r.date', 'r.report_epoch']),
        db('wallet_records as r')
          .select('r.*', db.raw(DATE('r')))
          .where('r.account_id', accountId)
          .whereRaw(sql, bindings)
          .orderBy(['r.date', 'r.report_epoch', 'r.address']),
      ])
      return { accounts, wallets }
    },

    /** The protocol record of one day. */
    async protocolRecord(day: ReportDay): Promise<ProtocolRecordRow | undefined> {
      return db('protocol_records as p')
        .select('p.*', db.raw(DATE('p')))
        .where(onDay('p', day))
        .first()
    },

    /** Fee records of one day of a kind (platform / originator: of one org; all: the day's total). */
    async feeRecord(day: ReportDay, kind: FeeKind, orgId: string): Promise<FeeRecordRow | undefined> {
      return db('fee_records as f')
        .select('f.*', db.raw(DATE('f')))
        .where(onDay('f', day))
        .where({ 'f.kind': kind, 'f.org_id': kind === 'all' ? '' : orgId })
        .first()
    },

    /** Operator fee records of one day, by operator id (numerically when they are indexes). */
    async operatorFeeRecords(day: ReportDay): Promise<OperatorFeeRecordRow[]> {
      return db('operator_fee_records as o')
        .select(
          'o.report_epoch',
          'o.operator_id',
          db.raw(DATE('o')),
          'o.active_validators',
          'o.operator_fees_eth',
          'o.operator_fees_rate',
        )
        .where(onDay('o', day))
        .orderByRaw(
          "case when o.operator_id ~ '^[0-9]+$' then lpad(o.operator_id, 20, '0') else o.operator_id end",
        )
    },

    /** The org's accounts among `values` (each an account id or a key). */
    async accountsByIdsOrKeys(orgId: string, values: string[]): Promise<{ id: string; key: string }[]> {
      if (values.length === 0) return []
      const ids = values.filter(isUuid).map((v) => v.toLowerCase())
      return db('accounts')
        .select('id', 'key')
        .where({ org_id: orgId })
        .where((q) => {
          q.whereIn('key', values)
          if (ids.length > 0) q.orWhereIn('id', ids)
        })
    },

    /**
     * What redemption projections start from: the chain's "now" (the head the follower last saw) and the
     * two latest ingested oracle reports, newest first (ingested, not necessarily computed).
     */
    async projectionState(): Promise<{ now: Date; reports: ReportState[] }> {
      const [clock, reports] = await Promise.all([
        db.raw('select coalesce((select max(time) from chain_heads), now()) as now'),
        db('oracle_reports')
          .select(
            'block_time',
            'total_underlying_supply',
            'total_supply',
            'validators_skimmed_balance',
            'trace_pulled_el_fees',
          )
          .modify((q) => {
            if (options.chainId !== undefined) q.where('chain_id', options.chainId)
          })
          .orderBy([
            { column: 'block_number', order: 'desc' },
            { column: 'log_index', order: 'desc' },
          ])
          .limit(2),
      ])
      return { now: new Date(clock.rows[0].now), reports }
    },

    /** Every target fee rate set on an account, oldest first. */
    async discountHistory(accountId: string): Promise<DiscountHistoryRow[]> {
      return db('discount_rates')
        .select('account_id', 'target_fee_rate', 'created_at', 'effective_from')
        .where({ account_id: accountId })
        .orderBy([{ column: 'created_at' }, { column: 'id' }])
    },
  }
}
/** The reports repository `createReportsRepo` returns. */
export type ReportsRepo = ReturnType<typeof createReportsRepo>
