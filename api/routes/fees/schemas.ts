import { Type } from 'typebox'
import type { FEE_RATE_COLUMNS } from '../../../db/records/columns.ts'
import { FEE_AMOUNT_COLUMNS } from '../../../db/records/columns.ts'
import { withFiatSchema } from '../../fiat-view.ts'
import { Nullable, StringEnum } from '../../schemas.ts'

/** Request and response schemas of the fee reads and the protocol record (api/routes/fees/). */

/** The V3 parts in LsETH: the v0 record names its parts in ETH only. */
const LSETH_PARTS: ReadonlySet<string> = new Set(['period_lc_fees_lseth', 'period_tech_provider_fees_lseth'])
/**
 * The fee record's amount fields of each version (stored columns, in their order): every part of both models,
 * so a record of either model sums to its fee in either version (a part of the other model: null).
 */
export const FEE_AMOUNTS = {
  v1: FEE_AMOUNT_COLUMNS,
  v0: FEE_AMOUNT_COLUMNS.filter((c) => !LSETH_PARTS.has(c)),
}
/** The fee record's rate fields of each version (stored columns, in the interface's order). */
export const FEE_RATES: Record<'v0' | 'v1', readonly (typeof FEE_RATE_COLUMNS)[number][]> = {
  v1: [
    'lc_fees_rate',
    'tech_provider_fees_rate',
    'operator_fees_rate',
    'platform_fees_rate',
    'rebate_rate',
    'platform_fees_at_discount_rate_rate',
  ],
  v0: [
    'operator_fees_rate',
    'platform_fees_rate',
    'rebate_rate',
    'platform_fees_at_discount_rate_rate',
    'lc_fees_rate',
    'tech_provider_fees_rate',
  ],
}

/** The stored ETH amounts of each record kind fiat values are made from. */
export const FEE_SOURCES: ReadonlySet<string> = new Set(FEE_AMOUNT_COLUMNS)
export const OPERATOR_SOURCES: ReadonlySet<string> = new Set(['operator_fees_eth'])
export const PROTOCOL_SOURCES: ReadonlySet<string> = new Set(['rewards_eth'])

const Str = Type.String()
const NullableStr = Nullable('string')

/** A platform or originator fee record of a version (its amounts with their fiat values when asked). */
export function feeRecordSchema(version: 'v0' | 'v1') {
  const amounts = FEE_AMOUNTS[version]
  const rates = FEE_RATES[version]
  const field = NullableStr
  return Type.Object({
    oracle_report: Str,
    date: Str,
    org_id: Str,
    fee_model: StringEnum(['v0', 'v3']),
    data_as_of: Type.String({ description: "when the day's version became visible (X-Report-Data-As-Of)" }),
    wallets: Type.Integer(),
    ...withFiatSchema(Object.fromEntries(amounts.map((f) => [f, field])), FEE_SOURCES),
    ...Object.fromEntries(rates.map((f) => [f, field])),
  })
}

/** A node operator's fee record of a date. */
export const OperatorRecordSchema = Type.Object(
  withFiatSchema(
    {
      oracle_report: Str,
      date: Str,
      fee_model: StringEnum(['v0', 'v3']),
      operator_id: Str,
      active_validators: Type.Integer(),
      operator_fees_eth: NullableStr,
      operator_fees_rate: NullableStr,
    },
    OPERATOR_SOURCES,
  ),
)

/** The protocol record of a date (public). */
export const ProtocolRecordSchema = Type.Object(
  withFiatSchema(
    {
      oracle_report: Str,
      date: Str,
      total_protocol_mints_lseth: Str,
      total_protocol_burns_lseth: Str,
      total_protocol_active_keys_count: Type.Integer(),
      rewards_eth: Str,
      gross_fee_rate: Str,
      gross_fee_lseth: Str,
      conversion_rate: Str,
      total_lseth_supply: Str,
      a_srr_7d: NullableStr,
    },
    PROTOCOL_SOURCES,
  ),
)

/** The path of a fee read: the report's date. */
export const DateParams = Type.Object({ date: Type.String({ description: 'YYYY-MM-DD' }) })
/** The fee reads of an organization honour `Impersonate-Org` (api/auth/impersonation.ts). */
export { ImpersonateHeaders } from '../../auth/impersonation.ts'

/**
 * The description of an organization's fee read.
 *
 * @example
 * feeDescription('platform') // "The reading organization's platform fee record for the report of the date …"
 */
export const feeDescription = (who: string) =>
  `The reading organization's ${who} fee record for the report of the date (zeros when it had no wallets). ` +
  'Amounts: sums over its wallets; *_rate: part / the fee-bearing rewards of those wallets (their ' +
  'gross_rewards_eth, or fees / global fee on a day River charged more than the pool gained: docs/interface.md).'
