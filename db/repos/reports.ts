import type { Queryable } from '../index.ts'
import type {
  FEE_AMOUNT_COLUMNS,
  FEE_RATE_COLUMNS,
  WALLET_AMOUNT_COLUMNS,
  WALLET_RATE_COLUMNS,
  WALLET_RECORD_COLUMNS,
} from '../records/columns.ts'
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
  validators_skimmed_balance: string
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

/**
 * Read-only queries of the reporting endpoints over the computed daily records. The read rule: a record is
 * visible only when its version is its day's `visible_version`; every query joins on it. A date is answered
 * by its latest report with visible records (two reports on one UTC date: the later one).
 *
 * The database serves one chain (as the redemption reads do); `chainId` narrows it when given.
 */
export function createReportsRepo(db: Queryable, options: { chainId?: number } = {}) {
  /** days with visible records, one per date (the latest of the date), with the pool state after it. */
  const visibleDays = (tx: Queryable) =>
    tx('days as d')
      .join('protocol_records as p', function () {
        this.on('p.chain_id', 'd.chain_id')
          .andOn('p.report_epoch', 'd.report_epoch')
          .andOn('p.version', 'd.visible_version')
      })
      .distinctOn('d.date')
      .select(
        'd.chain_id',
        'd.report_epoch',
        tx.raw(DATE('d')),
        'd.block_number',
        'd.log_index',
        'd.block_time',
        'd.status',
        'd.visible_version',
        'd.content_hash',
        'p.total_underlying_eth',
        'p.total_lseth_supply',
        'p.conversion_rate',
      )
      .whereNotNull('d.visible_version')
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

  /**
   * The hot reads in one round trip and without the query builder: the visible days of a date range (one
   * per date, as `visibleDays`) left-joined with the records of some addresses on them. The day travels
   * as one JSON text column (parsed once per day, not per row). SQL built once per column list.
   */
  const chainFilter = options.chainId !== undefined ? 'and d.chain_id = ?' : ''
  const chainBinding = options.chainId !== undefined ? [options.chainId] : []
  const daysWithRecords = new Map<string, { sql: string; name: string }>()
  const daysWithRecordsSql = (columns: readonly WalletRecordColumn[] | undefined) => {
    const key = columns ? columns.join(',') : '*'
    let entry = daysWithRecords.get(key)
    if (!entry) {
      const selected = columns
        ? columns
            .filter((c) => c !== 'date')
            .map((c) => `w.${c}`)
            .join(', ')
        : 'w.*'
      entry = {
        name: `lsreport_days_with_records_${daysWithRecords.size}${options.chainId !== undefined ? '_chain' : ''}`,
        sql: `with v as (
            select distinct on (d.date) d.chain_id, d.report_epoch, d.date, d.block_number, d.log_index,
              d.block_time, d.status, d.visible_version, d.content_hash,
              p.total_underlying_eth, p.total_lseth_supply, p.conversion_rate
            from days d
            join protocol_records p
              on p.chain_id = d.chain_id and p.report_epoch = d.report_epoch and p.version = d.visible_version
            where d.visible_version is not null and d.date >= ? and d.date <= ? ${chainFilter}
            order by d.date, d.block_number desc, d.log_index desc
          )
          select json_build_array(v.chain_id, v.report_epoch::text, to_char(v.date, 'YYYY-MM-DD'),
              v.block_number::text, (extract(epoch from v.block_time) * 1000)::bigint, v.status,
              v.visible_version, v.content_hash, v.total_underlying_eth::text, v.total_lseth_supply::text,
              v.conversion_rate::text)::text as v_day,
            ${selected}, to_char(w.date, 'YYYY-MM-DD') as date
          from v
          left join wallet_records w
            on w.chain_id = v.chain_id and w.report_epoch = v.report_epoch and w.version = v.visible_version
            and w.address = any(?::text[])
          order by v.date, w.address`,
      }
      daysWithRecords.set(key, entry)
    }
    return entry
  }

  const dayOfJson = (json: string): ReportDay => {
    const [chain, epoch, date, block, timeMs, status, version, hash, underlying, supply, rate] = JSON.parse(
      json,
    ) as [
      number,
      string,
      string,
      string,
      number,
      ReportDay['status'],
      number,
      string | null,
      string,
      string,
      string,
    ]
    return {
      chain_id: chain,
      report_epoch: epoch,
      date,
      block_number: block,
      block_time: new Date(timeMs),
      status,
      visible_version: version,
      content_hash: hash,
      total_underlying_eth: underlying,
      total_lseth_supply: supply,
      conversion_rate: rate,
    }
  }

  return {
    /** The report answering for `date` (YYYY-MM-DD), or undefined when the date has no visible records. */
    async day(date: string, tx: Queryable = db): Promise<ReportDay | undefined> {
      const row = await visibleDays(tx).where('d.date', date).first()
      return row ? strip(row) : undefined
    },

    /** The reports answering for every date of [from, to] that has visible records, by date. */
    async daysBetween(from: string, to: string, tx: Queryable = db): Promise<ReportDay[]> {
      const rows = await visibleDays(tx).where('d.date', '>=', from).where('d.date', '<=', to)
      return rows.map(strip)
    },

    /** The first and the latest dates with visible records (undefined when nothing is computed yet). */
    async bounds(tx: Queryable = db): Promise<{ first: ReportDay; latest: ReportDay } | undefined> {
      const [first, latest] = await Promise.all([
        visibleDays(tx).first(),
        tx
          .from(visibleDays(tx).as('v'))
          .select('*')
          .orderBy([{ column: 'date', order: 'desc' }])
          .first(),
      ])
      return first && latest ? { first: strip(first), latest: strip(latest) } : undefined
    },

    /** Post-fee conversion rates, one per date with visible records, ascending (lots). */
    async conversionRates(tx: Queryable = db): Promise<DateRateRow[]> {
      const rows: ReportDay[] = await visibleDays(tx)
      return rows.map((r) => ({
        date: r.date,
        report_epoch: r.report_epoch,
        conversion_rate: r.conversion_rate,
      }))
    },

    /** Wallet records of one day for the given (lower-case) addresses, by address. */
    async walletRecords(day: ReportDay, addresses: string[], tx: Queryable = db): Promise<WalletRecordRow[]> {
      if (addresses.length === 0) return []
      return tx('wallet_records as w')
        .select('w.*', tx.raw(DATE('w')))
        .where(onDay('w', day))
        .whereIn('w.address', addresses)
        .orderBy('w.address')
    },

    /**
     * In one round trip: the reports answering for every date of [from, to] with visible records (by date)
     * and the records of `addresses` (lower case) on them, by date and address. `days` is empty when no
     * date of the range has a computed report.
     *
     * @example
     * const { days, rows } = await reports.walletRecordsBetween('2026-05-03', '2026-05-03', ['0xab...'])
     */
    async walletRecordsBetween(
      from: string,
      to: string,
      addresses: readonly string[],
      tx: Queryable = db,
      columns?: readonly WalletRecordColumn[],
    ): Promise<{ days: ReportDay[]; rows: WalletRecordRow[] }> {
      const { sql, name } = daysWithRecordsSql(columns)
      // one text[] parameter (a knex array binding would become a list of parameters)
      const list = `{${addresses.map((a) => `"${a.replace(/["\\]/g, '\\$&')}"`).join(',')}}`
      // a named statement: parsed and planned once per connection
      const result = await tx.raw(sql, [from, to, ...chainBinding, list]).options({ name })
      const days: ReportDay[] = []
      const rows: WalletRecordRow[] = []
      let dayJson = ''
      for (const r of result.rows as (WalletRecordRow & { v_day: string })[]) {
        if (r.v_day !== dayJson) {
          dayJson = r.v_day
          days.push(dayOfJson(dayJson))
        }
        // the v_day column stays on the row (readers take the record's fields by name)
        if (r.address !== null) rows.push(r)
      }
      return { days, rows }
    },

    /** Account records of one day for the given account ids, by account id. */
    async accountRecords(
      day: ReportDay,
      accountIds: string[],
      tx: Queryable = db,
    ): Promise<AccountRecordRow[]> {
      if (accountIds.length === 0) return []
      return tx('account_records as a')
        .select('a.*', tx.raw(DATE('a')))
        .where(onDay('a', day))
        .whereIn('a.account_id', accountIds)
        .orderBy('a.account_id')
    },

    /** The wallet records attributed to the given accounts on one day, by account and address. */
    async accountWalletRecords(
      day: ReportDay,
      accountIds: string[],
      tx: Queryable = db,
    ): Promise<WalletRecordRow[]> {
      if (accountIds.length === 0) return []
      return tx('wallet_records as w')
        .select('w.*', tx.raw(DATE('w')))
        .where(onDay('w', day))
        .whereIn('w.account_id', accountIds)
        .orderBy(['w.account_id', 'w.address'])
    },

    /** One wallet's records over several days, by date. */
    async walletSeries(
      days: readonly ReportDay[],
      address: string,
      tx: Queryable = db,
    ): Promise<WalletRecordRow[]> {
      if (days.length === 0) return []
      const [sql, bindings] = onDays('w', days)
      return tx('wallet_records as w')
        .select('w.*', tx.raw(DATE('w')))
        .where('w.address', address)
        .whereRaw(sql, bindings)
        .orderBy(['w.date', 'w.report_epoch'])
    },

    /** One account's records and its wallets' records over several days, by date. */
    async accountSeries(
      days: readonly ReportDay[],
      accountId: string,
      tx: Queryable = db,
    ): Promise<{ accounts: AccountRecordRow[]; wallets: WalletRecordRow[] }> {
      if (days.length === 0) return { accounts: [], wallets: [] }
      const [sql, bindings] = onDays('r', days)
      const [accounts, wallets] = await Promise.all([
        tx('account_records as r')
          .select('r.*', tx.raw(DATE('r')))
          .where('r.account_id', accountId)
          .whereRaw(sql, bindings)
          .orderBy(['r.date', 'r.report_epoch']),
        tx('wallet_records as r')
          .select('r.*', tx.raw(DATE('r')))
          .where('r.account_id', accountId)
          .whereRaw(sql, bindings)
          .orderBy(['r.date', 'r.report_epoch', 'r.address']),
      ])
      return { accounts, wallets }
    },

    /** The protocol record of one day. */
    async protocolRecord(day: ReportDay, tx: Queryable = db): Promise<ProtocolRecordRow | undefined> {
      return tx('protocol_records as p')
        .select('p.*', tx.raw(DATE('p')))
        .where(onDay('p', day))
        .first()
    },

    /** Fee records of one day of a kind (platform / originator: of one org; all: the day's total). */
    async feeRecord(
      day: ReportDay,
      kind: FeeKind,
      orgId: string,
      tx: Queryable = db,
    ): Promise<FeeRecordRow | undefined> {
      return tx('fee_records as f')
        .select('f.*', tx.raw(DATE('f')))
        .where(onDay('f', day))
        .where({ 'f.kind': kind, 'f.org_id': kind === 'all' ? '' : orgId })
        .first()
    },

    /** Operator fee records of one day, by operator id (numerically when they are indexes). */
    async operatorFeeRecords(day: ReportDay, tx: Queryable = db): Promise<OperatorFeeRecordRow[]> {
      return tx('operator_fee_records as o')
        .select(
          'o.report_epoch',
          'o.operator_id',
          tx.raw(DATE('o')),
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
    async accountsByIdsOrKeys(
      orgId: string,
      values: string[],
      tx: Queryable = db,
    ): Promise<{ id: string; key: string }[]> {
      if (values.length === 0) return []
      const ids = values.filter(isUuid).map((v) => v.toLowerCase())
      return tx('accounts')
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
    async projectionState(tx: Queryable = db): Promise<{ now: Date; reports: ReportState[] }> {
      const [clock, reports] = await Promise.all([
        tx.raw('select coalesce((select max(time) from chain_heads), now()) as now'),
        tx('oracle_reports')
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
    async discountHistory(accountId: string, tx: Queryable = db): Promise<DiscountHistoryRow[]> {
      return tx('discount_rates')
        .select('account_id', 'target_fee_rate', 'created_at', 'effective_from')
        .where({ account_id: accountId })
        .orderBy([{ column: 'created_at' }, { column: 'id' }])
    },
  }
}
export type ReportsRepo = ReturnType<typeof createReportsRepo>
