import { CUMULATIVE_FIELDS, type WALLET_RATE_FIELDS } from '../fields/record-fields.ts'
import type { WalletRecord } from './wallet-record.ts'

/**
 * Stocks and flows, one rule: every amount and rate a reward record serves is declared here once by kind,
 * and every summary and rollup (engine/rollup.ts) treats a field by its kind and nothing else.
 * - `flow`: what happened over a report period (rewards, fees and their parts, mints, burns, rebates): a
 *   period's value is the sum of its days'.
 * - `stock`: a value at a date (balances, conversion rates, the running totals `total_*`, which are stocks
 *   of a running sum): a period gives it at its opening and at its closing, never summed.
 * - `rate`: a ratio of flows of the same day (a fee part / the fee-bearing rewards): a period's rate is
 *   derived from the period's summed numerator and denominator (`RATE_NUMERATORS`), never averaged.
 * - `attribute`: not an amount (ids, dates, the fee model and schedule, a setting in force).
 */

/** The kind of a served record field. */
export type FieldKind = 'flow' | 'stock' | 'rate' | 'attribute'

/** The fields of the wallet record that are rates: each is numerator / the day's fee-bearing rewards. */
export const RATE_NUMERATORS = {
  period_dao_fees_rate: 'dao_fees_eth',
  period_provider_fees_rate: 'provider_fees_eth',
  period_slashing_fees_rate: 'slashing_fees_eth',
  period_lc_fees_rate: 'lc_fees_eth',
  period_tech_provider_fees_rate: 'tech_provider_fees_eth',
  period_operator_fees_rate: 'operator_fees_eth',
  period_platform_fees_rate: 'platform_fees_eth',
  gross_protocol_fee_rate: 'fees_eth',
  discount_rate: 'rebate_eth',
} as const satisfies Record<
  (typeof WALLET_RATE_FIELDS)[number] | 'gross_protocol_fee_rate' | 'discount_rate',
  string
>

/** A rate field of the wallet record. */
export type RateField = keyof typeof RATE_NUMERATORS

/** Stocks that are rates (ETH per LsETH at a report): opening and closing values, as the balances. */
export const RATE_STOCKS = ['conversion_rate', 'previous_conversion_rate'] as const

/** The wallet record's attributes: not amounts, so never summed nor valued. */
const ATTRIBUTES = [
  'oracle_report',
  'address',
  'account_id',
  'org_id',
  'date',
  'fee_model',
  'fee_schedule_id',
  'on_platform',
  'target_fee_rate',
] as const satisfies ReadonlyArray<keyof WalletRecord>

/**
 * Every field of the wallet record (and of the v0 ETH view, `*_lseth` -> `*_eth`) by kind.
 *
 * @example
 * FIELD_KINDS.get('balance_lseth') // 'stock'
 * FIELD_KINDS.get('rewards_eth') // 'flow'
 * FIELD_KINDS.get('period_lc_fees_rate') // 'rate'
 */
export const FIELD_KINDS: ReadonlyMap<string, FieldKind> = new Map<string, FieldKind>([
  ...CUMULATIVE_FIELDS.map(([period]) => [period, 'flow'] as const),
  ...CUMULATIVE_FIELDS.map(([, total]) => [total, 'stock'] as const),
  ['balance_lseth', 'stock'],
  ['balance_eth', 'stock'],
  ...RATE_STOCKS.map((field) => [field, 'stock'] as const),
  ...Object.keys(RATE_NUMERATORS).map((field) => [field, 'rate'] as const),
  ...ATTRIBUTES.map((field) => [field, 'attribute'] as const),
])

/**
 * The kind of a served field, or undefined when none is declared (field-kinds.test.ts walks every served
 * field list so that none is left undeclared).
 *
 * @example
 * kindOf('total_rewards_eth') // 'stock'
 */
export function kindOf(field: string): FieldKind | undefined {
  return FIELD_KINDS.get(field)
}
