import type { FeeModel } from './fee-schedule.ts'

/**
 * The one rule for fields of the other fee model (README "For finance"). A record of either model accounts
 * for its whole fee: the parts of its model sum to `fees_eth`. A period field that exists only in the other
 * model (a v0 record's Liquid Collective part, a V3 record's DAO part) is null in it, never 0. Running totals
 * (`total_*`) are never null: they sum a wallet's whole history, across both models, so the totals of every
 * part sum to `total_fees_eth`.
 */

/** Period fields (amounts and rates) that exist only in the v0 fee model. */
export const V0_ONLY_FIELDS = [
  'dao_fees_eth',
  'provider_fees_eth',
  'slashing_fees_eth',
  'period_dao_fees_rate',
  'period_provider_fees_rate',
  'period_slashing_fees_rate',
] as const

/** Period fields (amounts and rates) that exist only in the V3 fee model (Commercials V3). */
export const V3_ONLY_FIELDS = [
  'lc_fees_eth',
  'tech_provider_fees_eth',
  'period_lc_fees_lseth',
  'period_tech_provider_fees_lseth',
  'period_lc_fees_rate',
  'period_tech_provider_fees_rate',
  'lc_fees_rate',
  'tech_provider_fees_rate',
] as const

const V0_ONLY: ReadonlySet<string> = new Set(V0_ONLY_FIELDS)
const V3_ONLY: ReadonlySet<string> = new Set(V3_ONLY_FIELDS)

/**
 * Whether `field` does not exist in a record of `model` (so it is presented as null).
 *
 * @example
 * isOtherModelField('lc_fees_eth', 'v0') // true
 * isOtherModelField('total_lc_fees_eth', 'v0') // false: totals span both models
 */
export function isOtherModelField(field: string, model: FeeModel): boolean {
  return model === 'v0' ? V3_ONLY.has(field) : V0_ONLY.has(field)
}

/** The fee parts (ETH) of each model: they sum to the record's `fees_eth`. */
export const FEE_PARTS_OF_MODEL: Readonly<Record<FeeModel, readonly string[]>> = {
  v0: ['dao_fees_eth', 'provider_fees_eth', 'slashing_fees_eth', 'operator_fees_eth', 'platform_fees_eth'],
  v3: ['lc_fees_eth', 'tech_provider_fees_eth', 'operator_fees_eth', 'platform_fees_eth'],
}

/** The running totals of every part of both models: they sum to `total_fees_eth`. */
export const FEE_PART_TOTALS = [
  'total_dao_fees_eth',
  'total_provider_fees_eth',
  'total_slashing_fees_eth',
  'total_lc_fees_eth',
  'total_tech_provider_fees_eth',
  'total_operator_fees_eth',
  'total_platform_fees_eth',
] as const
