/**
 * The computed records' field names: the one definition the engine's math (engine/) and the stored columns
 * (db/) both read. Pure data, no import: the lowest layer (test/architecture.test.ts).
 */

/** Pairs (period field, cumulative field) of a wallet record: total = previous total + period value. */
export const CUMULATIVE_FIELDS = [
  ['rewards_eth', 'total_rewards_eth'],
  ['mints_lseth', 'total_mints_lseth'],
  ['burns_lseth', 'total_burns_lseth'],
  ['mints_eth', 'total_mints_eth'],
  ['burns_eth', 'total_burns_eth'],
  ['fees_eth', 'total_fees_eth'],
  ['period_lc_fees_lseth', 'total_lc_fees_lseth'],
  ['period_tech_provider_fees_lseth', 'total_tech_provider_fees_lseth'],
  ['platform_fees_eth', 'total_platform_fees_eth'],
  ['operator_fees_eth', 'total_operator_fees_eth'],
  ['lc_fees_eth', 'total_lc_fees_eth'],
  ['tech_provider_fees_eth', 'total_tech_provider_fees_eth'],
  ['dao_fees_eth', 'total_dao_fees_eth'],
  ['provider_fees_eth', 'total_provider_fees_eth'],
  ['slashing_fees_eth', 'total_slashing_fees_eth'],
  ['platform_fees_at_discount_rate_eth', 'total_platform_fees_at_discount_rate_eth'],
  ['gross_fees_eth', 'total_gross_fees_eth'],
  ['gross_rewards_eth', 'total_gross_rewards_eth'],
  ['rebate_eth', 'total_rebate_eth'],
  ['rebate_lseth', 'total_rebate_lseth'],
] as const

/** A period amount field of a wallet record (summed into its total). */
export type PeriodField = (typeof CUMULATIVE_FIELDS)[number][0]

/** A cumulative (`total_*`) field of a wallet record. */
export type TotalField = (typeof CUMULATIVE_FIELDS)[number][1]

/** Every bigint field of a wallet record, in table order: balance, period amounts, then cumulative totals. */
export const WALLET_AMOUNT_FIELDS: readonly ('balance_lseth' | 'balance_eth' | PeriodField | TotalField)[] = [
  'balance_lseth',
  'balance_eth',
  ...CUMULATIVE_FIELDS.map(([period]) => period),
  ...CUMULATIVE_FIELDS.map(([, total]) => total),
]

/** A wallet record's fee rate per part (the report's constants, by on-platform or not), in table order. */
export const WALLET_RATE_FIELDS = [
  'period_dao_fees_rate',
  'period_provider_fees_rate',
  'period_slashing_fees_rate',
  'period_lc_fees_rate',
  'period_tech_provider_fees_rate',
  'period_operator_fees_rate',
  'period_platform_fees_rate',
] as const

/** Amount fields summed into fee totals and stored in the platform / originator fee records, in table order. */
export const FEE_TOTAL_FIELDS = [
  'balance_lseth',
  'gross_rewards_eth',
  'rewards_eth',
  'fees_eth',
  'dao_fees_eth',
  'provider_fees_eth',
  'slashing_fees_eth',
  'lc_fees_eth',
  'period_lc_fees_lseth',
  'tech_provider_fees_eth',
  'period_tech_provider_fees_lseth',
  'operator_fees_eth',
  'platform_fees_eth',
  'rebate_eth',
  'rebate_lseth',
  'platform_fees_at_discount_rate_eth',
] as const
