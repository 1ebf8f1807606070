/**
 * Column lists of the computed-record tables. They mirror the engine's record fields (db/ does not import
 * engine/); `jobs/days/columns.test.ts` holds them equal, so a field added to the engine fails CI until
 * a migration adds its column.
 */

/** Amount columns of wallet and account records: balance, period amounts, then cumulative totals. */
export const WALLET_AMOUNT_COLUMNS = [
  'balance_lseth',
  'balance_eth',
  'rewards_eth',
  'mints_lseth',
  'burns_lseth',
  'mints_eth',
  'burns_eth',
  'fees_eth',
  'period_lc_fees_lseth',
  'period_tech_provider_fees_lseth',
  'platform_fees_eth',
  'operator_fees_eth',
  'lc_fees_eth',
  'tech_provider_fees_eth',
  'dao_fees_eth',
  'provider_fees_eth',
  'slashing_fees_eth',
  'platform_fees_at_discount_rate_eth',
  'gross_fees_eth',
  'gross_rewards_eth',
  'rebate_eth',
  'rebate_lseth',
  'total_rewards_eth',
  'total_mints_lseth',
  'total_burns_lseth',
  'total_mints_eth',
  'total_burns_eth',
  'total_fees_eth',
  'total_lc_fees_lseth',
  'total_tech_provider_fees_lseth',
  'total_platform_fees_eth',
  'total_operator_fees_eth',
  'total_lc_fees_eth',
  'total_tech_provider_fees_eth',
  'total_dao_fees_eth',
  'total_provider_fees_eth',
  'total_slashing_fees_eth',
  'total_platform_fees_at_discount_rate_eth',
  'total_gross_fees_eth',
  'total_gross_rewards_eth',
  'total_rebate_eth',
  'total_rebate_lseth',
] as const

/**
 * Wallet and account amount columns added after migration 003 (by 012_eth_flows): 003 creates the others.
 * A column added by a later migration joins this list, so 003 keeps creating exactly what it created.
 */
export const WALLET_AMOUNT_COLUMNS_ADDED_BY_012 = [
  'balance_eth',
  'mints_eth',
  'burns_eth',
  'total_mints_eth',
  'total_burns_eth',
] as const

/** The wallet and account amount columns migration 003 creates (the live list less later additions). */
export const WALLET_AMOUNT_COLUMNS_OF_003: readonly string[] = WALLET_AMOUNT_COLUMNS.filter(
  (c) => !(WALLET_AMOUNT_COLUMNS_ADDED_BY_012 as readonly string[]).includes(c),
)

/** The cumulative (`total_*`) columns: what the next day reads from the previous one. */
export const WALLET_TOTAL_COLUMNS = WALLET_AMOUNT_COLUMNS.filter((c) => c.startsWith('total_'))

/** Per-part fee rate columns of a wallet record (report constants, by on-platform or not). */
export const WALLET_RATE_COLUMNS = [
  'period_dao_fees_rate',
  'period_provider_fees_rate',
  'period_slashing_fees_rate',
  'period_lc_fees_rate',
  'period_tech_provider_fees_rate',
  'period_operator_fees_rate',
  'period_platform_fees_rate',
] as const

/** Every column of `wallet_records`, in table order (the COPY column list). */
export const WALLET_RECORD_COLUMNS = [
  'chain_id',
  'report_epoch',
  'version',
  'address',
  'date',
  'account_id',
  'org_id',
  'originator_org_id',
  'on_platform',
  'target_fee_rate',
  'fee_model',
  'fee_schedule_id',
  'conversion_rate',
  'previous_conversion_rate',
  'gross_protocol_fee_rate',
  'discount_rate',
  ...WALLET_RATE_COLUMNS,
  ...WALLET_AMOUNT_COLUMNS,
  'engine_version',
] as const

/** Amount columns of platform / originator fee records. */
export const FEE_AMOUNT_COLUMNS = [
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

/** Rate columns of platform / originator fee records (part / gross rewards of the group). */
export const FEE_RATE_COLUMNS = [
  'platform_fees_rate',
  'platform_fees_at_discount_rate_rate',
  'rebate_rate',
  'operator_fees_rate',
  'lc_fees_rate',
  'tech_provider_fees_rate',
] as const
