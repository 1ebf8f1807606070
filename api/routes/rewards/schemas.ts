import { type TSchema, Type } from 'typebox'
import { CurrencyQuery } from '../../fiat-view.ts'
import type { RecordVersion, Unit } from '../../record-fields.ts'
import { AsOfQuery } from '../../reporting/reads.ts'
import { Nullable, StringEnum } from '../../schemas.ts'
import { totalsSchema, walletRecordSchema } from '../../wallet-presentation.ts'
import { periodAmountsSchema } from './rollup-presenting.ts'

/** Request and response schemas of the reward reads (api/routes/rewards/). */

export const DateString = Type.String({ description: 'YYYY-MM-DD (UTC date of the report block)' })
/** The reward reads of an organization honour `Impersonate-Org` (api/auth/impersonation.ts). */
export { ImpersonateHeaders } from '../../auth/impersonation.ts'
export const UnitSchema = Type.Union([Type.Literal('lseth'), Type.Literal('eth')], {
  description:
    'lseth (default): as stored; eth: every *_lseth amount replaced by its *_eth counterpart, valued at each ' +
    "day's rate (totals: the running sums of the daily ETH flows); rebate_lseth fields left out",
})
export const AsOf = Type.Object({ ...AsOfQuery, ...CurrencyQuery })
const FeeModelSchema = StringEnum(['v0', 'v3'])
const FeeModels = Type.Array(FeeModelSchema, {
  description: 'the fee models of the days covered (both: the range crosses the 2026-05-01 cutover)',
})

export const LotRequest = Type.Object({
  balance: Type.String({ description: 'LsETH, decimal string (at most 18 decimals)' }),
  from: DateString,
  to: Type.Optional(DateString),
})
const LotResult = Type.Object({
  balance: Type.String(),
  from: Type.String(),
  to: Type.String(),
  start_conversion_rate: Type.String(),
  end_conversion_rate: Type.String(),
  accrued_rewards: Type.String(),
})
export const LotsResponse = Type.Object({
  balance: Type.String(),
  accrued_rewards: Type.String(),
  lots: Type.Array(LotResult),
})

/** An account's reward record of a date (POST /eth/{v1,v0}/rewards/accounts). */
export function accountRecordSchema(version: RecordVersion, unit: Unit) {
  return Type.Object({
    account_id: Type.String(),
    fee_model: FeeModelSchema,
    totals: totalsSchema(version, unit),
    date: Type.String(),
    wallets: Type.Array(walletRecordSchema(version, unit)),
  })
}

const DataAsOf = Type.String({
  description: "when the newest of the days' versions became visible (X-Report-Data-As-Of)",
})
const Requested = Type.Object(
  { from: Type.String(), to: Type.String() },
  { description: 'the range asked for (from / to are the dates of the reports it covers)' },
)

/** What a summary says of the range it covers (`coverage`). */
const Coverage = {
  from: Type.String({ description: 'the date of the first report covered' }),
  to: Type.String({ description: 'the date of the last report covered' }),
  requested: Requested,
  fee_models: FeeModels,
  data_as_of: DataAsOf,
}

/** The `group_by` query parameter of the summaries. */
export const GroupByQuery = {
  group_by: Type.Optional(
    StringEnum(['day', 'month', 'quarter', 'year'], {
      description:
        'roll the range up into UTC calendar periods (periods[] instead of days[]; CSV: one row per period, ' +
        'per period and wallet on an account, per period and account on the organization); a period cut by ' +
        'from / to or with a date without a report is partial',
    }),
  ),
}

/**
 * A summary's totals (or a period's amounts): flows summed, stocks at the closing (the record's names) and
 * the opening (`opening_*`), rates from the summed amounts, fiat by the same rule (engine/field-kinds.ts).
 */
export function summaryTotalsSchema(version: RecordVersion, unit: Unit) {
  return Type.Object(periodAmountsSchema(version, unit), {
    description:
      'flows: the sums over the range; stocks (balances, conversion_rate, total_*): the closing value, and ' +
      'opening_<name> the value at the close of the report before the first day; rates: the summed part / ' +
      'the summed fee-bearing rewards; <flow>_<currency>: the sum of the days’ values, balance_<currency> / ' +
      'opening_balance_<currency>: the balance at price_<currency> / opening_price_<currency>',
  })
}

/** A rolled-up period of a summary (`group_by`). */
export function periodSchema(version: RecordVersion, unit: Unit) {
  return Type.Object({
    period: Type.String({ description: '2026-04-30, 2026-04, 2026-Q2 or 2026 (UTC)' }),
    from: Type.String({ description: "the period's first date within the range asked for" }),
    to: Type.String({ description: "the period's last date within the range asked for" }),
    partial: Type.Boolean({ description: 'cut by from / to, or with a date without a report' }),
    days: Type.Integer({ description: 'the reports in it' }),
    fee_models: FeeModels,
    ...periodAmountsSchema(version, unit),
  })
}

/** A wallet's summary over a range (GET /eth/{v1,v0}/rewards/wallets/:idOrKey/summary). */
export function walletSummarySchema(version: RecordVersion, unit: Unit) {
  return Type.Object({
    address: Type.String(),
    account_id: Nullable('string'),
    ...Coverage,
    group_by: Type.Optional(Type.String()),
    totals: summaryTotalsSchema(version, unit),
    days: Type.Optional(Type.Array(walletRecordSchema(version, unit))),
    periods: Type.Optional(Type.Array(periodSchema(version, unit))),
  })
}

/** The organization's summary over a range (GET /eth/{v1,v0}/rewards/organization/summary). */
export function organizationSummarySchema(version: RecordVersion, unit: Unit) {
  return Type.Object({
    org_id: Type.String(),
    ...Coverage,
    group_by: Type.String(),
    totals: summaryTotalsSchema(version, unit),
    periods: Type.Array(
      Type.Object({
        ...periodSchema(version, unit).properties,
        accounts: Type.Array(
          Type.Object({ account_id: Type.String(), ...periodAmountsSchema(version, unit) }),
        ),
      }),
    ),
  })
}

/** An account's summary over a range (GET /eth/{v1,v0}/rewards/accounts/:idOrKey/summary). */
export function accountSummarySchema(version: RecordVersion, unit: Unit) {
  return Type.Object({
    account_id: Type.String(),
    ...Coverage,
    group_by: Type.Optional(Type.String()),
    totals: summaryTotalsSchema(version, unit),
    periods: Type.Optional(
      Type.Array(
        Type.Object({
          ...periodSchema(version, unit).properties,
          wallets: Type.Array(Type.Object({ address: Type.String(), ...periodAmountsSchema(version, unit) })),
        }),
      ),
    ),
    days: Type.Optional(
      Type.Array(
        Type.Object({
          oracle_report: Type.String(),
          date: Type.String(),
          fee_model: FeeModelSchema,
          totals: totalsSchema(version, unit),
          wallets: Type.Array(walletRecordSchema(version, unit)),
        }),
      ),
    ),
  })
}

/** The union of the schemas of the stored unit and the ETH view (v0 reads take `unit`). */
export function eitherUnit<T extends TSchema>(
  version: RecordVersion,
  schema: (v: RecordVersion, u: Unit) => T,
) {
  return version === 'v1'
    ? schema(version, 'lseth')
    : Type.Union([schema(version, 'lseth'), schema(version, 'eth')])
}
