import { WALLET_RATE_FIELDS } from '../../fields/record-fields.ts'
import type { Queryable } from '../index.ts'
import type { AccountRecordRow, ReportDay } from './reports.ts'

/**
 * The reads of an export's builder (jobs/exports/build.ts), a page at a time so that an organization-wide
 * export holds one page of accounts in memory: the organization's account ids, the account records of a
 * page of accounts over the export's days, and each day's rates (every wallet of a report has the same).
 * The read rule is the reporting reads' (db/repos/reports.ts): records of each day's visible version.
 */

/** The rates of a report, as every wallet record of it states them. */
export interface ReportRatesRow {
  report_epoch: string
  fee_model: 'v0' | 'v3'
  conversion_rate: string
  previous_conversion_rate: string
  gross_protocol_fee_rate: string
}

/** The wallet record columns `walletRates` reads. */
const WALLET_RATES_COLUMNS = ['gross_protocol_fee_rate', 'discount_rate', ...WALLET_RATE_FIELDS] as const

/** A wallet record's rates and the amounts their statement is checked on (decimal strings). */
export type WalletRatesRow = { report_epoch: string } & Record<(typeof WALLET_RATES_COLUMNS)[number], string>

const DATE = (alias: string) => `to_char(${alias}.date, 'YYYY-MM-DD') as date`

/** `(chain_id, report_epoch, version) in (...)` of visible days on the alias's table, with its bindings. */
function onDays(alias: string, days: readonly ReportDay[]): [string, (string | number)[]] {
  return [
    `(${alias}.chain_id, ${alias}.report_epoch, ${alias}.version) in (${days.map(() => '(?, ?, ?)').join(', ')})`,
    days.flatMap((d) => [d.chain_id, d.report_epoch, d.visible_version]),
  ]
}

/** The export builder's paged reads. */
export function createExportReadsRepo(db: Queryable) {
  return {
    /** Every account id of an organization, by id (ids only: 20k accounts are ~1 MB). */
    async accountIds(orgId: string): Promise<string[]> {
      const rows: { id: string }[] = await db('accounts').where({ org_id: orgId }).select('id').orderBy('id')
      return rows.map((r) => r.id)
    },

    /** The given accounts' ids that belong to the organization (others: left out), by id. */
    async ownAccountIds(orgId: string, ids: readonly string[]): Promise<string[]> {
      if (ids.length === 0) return []
      const rows: { id: string }[] = await db('accounts')
        .where({ org_id: orgId })
        .whereIn('id', [...ids])
        .select('id')
        .orderBy('id')
      return rows.map((r) => r.id)
    },

    /** The account records of `accountIds` on the visible versions of `days`, by account, date and report. */
    async accountRecords(
      days: readonly ReportDay[],
      accountIds: readonly string[],
    ): Promise<AccountRecordRow[]> {
      if (days.length === 0 || accountIds.length === 0) return []
      const [sql, bindings] = onDays('r', days)
      return db('account_records as r')
        .select('r.*', db.raw(DATE('r')))
        .whereIn('r.account_id', [...accountIds])
        .whereRaw(sql, bindings)
        .orderBy(['r.account_id', 'r.date', 'r.report_epoch'])
    },

    /**
     * What an account's day states of its rates (engine/rollup.ts `statedRates`) from each of its wallet
     * records on the visible versions of `days`: the rates, g and the amounts the discount rate is checked on.
     * Only those columns: a records export reads them for every wallet of the organization.
     */
    async walletRates(days: readonly ReportDay[], accountId: string): Promise<WalletRatesRow[]> {
      if (days.length === 0) return []
      const [sql, bindings] = onDays('r', days)
      return db('wallet_records as r')
        .select(['r.report_epoch', ...WALLET_RATES_COLUMNS.map((c) => `r.${c}`)])
        .where('r.account_id', accountId)
        .whereRaw(sql, bindings)
        .orderBy(['r.report_epoch', 'r.address'])
    },

    /** Each day's rates from one wallet record of its visible version (days without a record: absent). */
    async reportRates(days: readonly ReportDay[]): Promise<ReportRatesRow[]> {
      if (days.length === 0) return []
      const values = days.map(() => '(?::int, ?::bigint, ?::int)').join(', ')
      const result = await db.raw(
        `select w.report_epoch::text as report_epoch, w.fee_model, w.conversion_rate,
           w.previous_conversion_rate, w.gross_protocol_fee_rate
         from (values ${values}) as v(chain_id, report_epoch, version)
         cross join lateral (
           select * from wallet_records w
           where w.chain_id = v.chain_id and w.report_epoch = v.report_epoch and w.version = v.version
           limit 1
         ) w`,
        days.flatMap((d) => [d.chain_id, d.report_epoch, d.visible_version]),
      )
      return result.rows
    },
  }
}
