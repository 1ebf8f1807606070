/**
 * Column lists of the computed-record tables: the records' fields (fields/record-fields.ts, the one list the
 * engine's math reads too), with the columns only the tables have. A field added there needs a migration
 * that adds its column (`test/migrations*` and the day tests fail until it exists).
 */
import { FEE_TOTAL_FIELDS, WALLET_AMOUNT_FIELDS, WALLET_RATE_FIELDS } from '../../fields/record-fields.ts'

/** Amount columns of wallet and account records: balance, period amounts, then cumulative totals. */
export const WALLET_AMOUNT_COLUMNS = WALLET_AMOUNT_FIELDS

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
export const WALLET_RATE_COLUMNS = WALLET_RATE_FIELDS

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
export const FEE_AMOUNT_COLUMNS = FEE_TOTAL_FIELDS

/** Rate columns of platform / originator fee records (part / gross rewards of the group). */
export const FEE_RATE_COLUMNS = [
  'platform_fees_rate',
  'platform_fees_at_discount_rate_rate',
  'rebate_rate',
  'operator_fees_rate',
  'lc_fees_rate',
  'tech_provider_fees_rate',
] as const
