import { type TSchema, Type } from 'typebox'
import { CurrencyQuery } from '../../fiat-view.ts'
import type { RecordVersion, Unit } from '../../record-fields.ts'
import { AsOfQuery } from '../../reporting/reads.ts'
import { Nullable, StringEnum } from '../../schemas.ts'
import { totalsSchema, walletRecordSchema } from '../../wallet-presentation.ts'

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

/** A wallet's summary over a range (GET /eth/{v1,v0}/rewards/wallets/:idOrKey/summary). */
export function walletSummarySchema(version: RecordVersion, unit: Unit) {
  return Type.Object({
    address: Type.String(),
    account_id: Nullable('string'),
    ...Coverage,
    totals: totalsSchema(version, unit),
    days: Type.Array(walletRecordSchema(version, unit)),
  })
}

/** An account's summary over a range (GET /eth/{v1,v0}/rewards/accounts/:idOrKey/summary). */
export function accountSummarySchema(version: RecordVersion, unit: Unit) {
  return Type.Object({
    account_id: Type.String(),
    ...Coverage,
    totals: totalsSchema(version, unit),
    days: Type.Array(
      Type.Object({
        oracle_report: Type.String(),
        date: Type.String(),
        fee_model: FeeModelSchema,
        totals: totalsSchema(version, unit),
        wallets: Type.Array(walletRecordSchema(version, unit)),
      }),
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
