import { WALLET_AMOUNT_FIELDS } from '../fields/record-fields.ts'
import type { WalletAmounts } from './account-record.ts'
import { isOtherModelField } from './fee-model-fields.ts'
import type { FeeModel } from './fee-schedule.ts'
import { formatUnits18 } from './units.ts'
import type { WalletAmountField, WalletRecord } from './wallet-record.ts'

/**
 * The fields of the reward records as the API (and an export, jobs/exports/) shows them: the v1 and v0 wallet records (the interface's
 * order), the v0 ETH view, and the engine's records presented in them (amounts as exact decimal strings; a
 * period part of the other fee model null, engine/fee-model-fields.ts). Stored rows are presented straight
 * from their strings by api/wallet-presentation.ts, equal to this path.
 */

/** A version of the reward records. */
export type RecordVersion = 'v0' | 'v1'
/** The unit of a v0 reward read: `lseth` as stored, `eth` every LsETH amount in ETH (README "For finance"). */
export type Unit = 'lseth' | 'eth'

/** Every amount field of a wallet record, as a set (what a field name is checked against). */
export const WALLET_AMOUNTS: ReadonlySet<string> = new Set(WALLET_AMOUNT_FIELDS)

/** The fields of the interface's "Wallet reward record (v1)", in its order, plus the V3 lc / tech rates. */
const V1_INTERFACE_FIELDS = [
  'oracle_report',
  'address',
  'account_id',
  'org_id',
  'date',
  'balance_lseth',
  'rewards_eth',
  'total_rewards_eth',
  'conversion_rate',
  'previous_conversion_rate',
  'mints_lseth',
  'total_mints_lseth',
  'burns_lseth',
  'total_burns_lseth',
  'fees_eth',
  'total_fees_eth',
  'period_lc_fees_lseth',
  'total_lc_fees_lseth',
  'period_tech_provider_fees_lseth',
  'total_tech_provider_fees_lseth',
  'platform_fees_eth',
  'total_platform_fees_eth',
  'operator_fees_eth',
  'total_operator_fees_eth',
  'period_lc_fees_rate',
  'period_tech_provider_fees_rate',
] as const satisfies ReadonlyArray<keyof WalletRecord>

/** The V3 parts in ETH (the v1 record's lc / tech parts are otherwise LsETH): a V3 fee sums in ETH. */
const V3_PARTS_IN_ETH = [
  'lc_fees_eth',
  'total_lc_fees_eth',
  'tech_provider_fees_eth',
  'total_tech_provider_fees_eth',
] as const satisfies ReadonlyArray<keyof WalletRecord>

/** The v0 parts the V3 model has not (null in a V3 record; totals kept). */
const V0_PARTS = [
  'dao_fees_eth',
  'total_dao_fees_eth',
  'provider_fees_eth',
  'total_provider_fees_eth',
  'slashing_fees_eth',
  'total_slashing_fees_eth',
] as const satisfies ReadonlyArray<keyof WalletRecord>

/** The discount and rebate fields ("exposed by the v0 reward endpoints and by /rewards/wallets"). */
const DISCOUNT_FIELDS = [
  'platform_fees_at_discount_rate_eth',
  'total_platform_fees_at_discount_rate_eth',
  'discount_rate',
  'rebate_eth',
  'total_rebate_eth',
  'rebate_lseth',
  'total_rebate_lseth',
] as const satisfies ReadonlyArray<keyof WalletRecord>

/**
 * The v1 wallet record: the interface's fields, then the record's `fee_model`, the parts of both models in
 * ETH (the other model's period parts null: engine/fee-model-fields.ts) and the discount fields.
 */
export const V1_WALLET_RECORD_FIELDS = [
  ...V1_INTERFACE_FIELDS,
  'fee_model',
  ...V3_PARTS_IN_ETH,
  ...V0_PARTS,
  ...DISCOUNT_FIELDS,
] as const satisfies ReadonlyArray<keyof WalletRecord>

/** The "Additional fields in the v0 reward record", in the interface's order. */
export const V0_ADDITIONAL_FIELDS = [
  ...V0_PARTS,
  'platform_fees_at_discount_rate_eth',
  'total_platform_fees_at_discount_rate_eth',
  'gross_protocol_fee_rate',
  'discount_rate',
  'gross_fees_eth',
  'total_gross_fees_eth',
  'gross_rewards_eth',
  'total_gross_rewards_eth',
  'rebate_eth',
  'total_rebate_eth',
  'rebate_lseth',
  'total_rebate_lseth',
] as const satisfies ReadonlyArray<keyof WalletRecord>

/**
 * The v0 record: the v1 interface fields without the V3-only lc / tech provider fields, the v0 additional
 * fields, then the record's `fee_model` and the V3 parts in ETH (null before the cutover), so the v0 parts
 * of a V3 record sum to its fee.
 */
export const V0_WALLET_RECORD_FIELDS = [
  ...V1_INTERFACE_FIELDS.filter((field) => !field.includes('lc_fees') && !field.includes('tech_provider')),
  ...V0_ADDITIONAL_FIELDS,
  'fee_model',
  ...V3_PARTS_IN_ETH,
] as const satisfies ReadonlyArray<keyof WalletRecord>

/** A presented wallet record: amounts as exact decimal strings, nulls kept. */
export type PresentedWalletRecord = Record<string, string | null>

/**
 * Presents a record in the shape of the v1 or v0 API: only that version's fields, in the interface's order,
 * amounts as exact ETH / LsETH decimal strings (`formatUnits18`), rates and ids as they are.
 *
 * @example
 * presentWalletRecord(record, 'v1').rewards_eth // '0.090009000900090009'
 */
export function presentWalletRecord(
  record: WalletRecord,
  version: RecordVersion,
  unit: Unit = 'lseth',
): PresentedWalletRecord {
  const out: PresentedWalletRecord = {}
  for (const field of recordFields(version, unit)) {
    const value = record[field as keyof WalletRecord]
    if (isOtherModelField(field, record.fee_model)) out[field] = null
    else out[field] = typeof value === 'bigint' ? formatUnits18(value) : (value as string | null)
  }
  return out
}

/** LsETH fields the ETH view leaves out: their ETH amounts are fields of the record already. */
const NOT_IN_ETH_VIEW: ReadonlySet<string> = new Set(['rebate_lseth', 'total_rebate_lseth'])

/**
 * The v0 record's fields in ETH: every `*_lseth` amount replaced by its stored `*_eth` counterpart, valued
 * at each day's rate (balance_eth at the record's report; mints_eth / burns_eth each day's flow at that
 * day's rate, their totals the running sums of those, never a balance re-priced at a later rate);
 * rebate_lseth and total_rebate_lseth are left out (rebate_eth and total_rebate_eth are their ETH amounts).
 */
const V0_ETH_FIELDS: readonly string[] = V0_WALLET_RECORD_FIELDS.flatMap((field) => {
  if (NOT_IN_ETH_VIEW.has(field)) return []
  return [field.endsWith('_lseth') ? field.replace(/_lseth$/, '_eth') : field]
})

/**
 * The fields of a presented record of a version in a unit, in order: `lseth` (as stored), the version's
 * fields; `eth` (v0 reads only: v1 reads take no unit), the v0 fields named and valued in ETH.
 *
 * @example
 * recordFields('v0', 'eth').includes('total_mints_eth') // true
 */
export function recordFields(version: RecordVersion, unit: Unit = 'lseth'): readonly string[] {
  if (unit === 'eth') {
    if (version !== 'v0') throw new Error('only v0 records have an ETH view')
    return V0_ETH_FIELDS
  }
  return version === 'v1' ? V1_WALLET_RECORD_FIELDS : V0_WALLET_RECORD_FIELDS
}

/**
 * Presents summed amounts (an account's day, or a range's `summarizeRange`) as the totals of a version and
 * unit: that view's amount fields in its order, exact decimal strings. A period part of a fee model none of
 * `models` (the models of the days summed) has is null (engine/fee-model-fields.ts); running totals never.
 *
 * @example
 * presentTotals(amounts, 'v1', 'lseth', new Set(['v0'])).lc_fees_eth // null
 */
export function presentTotals(
  amounts: WalletAmounts,
  version: RecordVersion,
  unit: Unit,
  models: ReadonlySet<FeeModel>,
): Record<string, string | null> {
  const totals: Record<string, string | null> = {}
  for (const field of recordFields(version, unit)) {
    if (!WALLET_AMOUNTS.has(field)) continue
    const absent = [...models].every((model) => isOtherModelField(field, model))
    totals[field] = absent ? null : formatUnits18(amounts[field as WalletAmountField])
  }
  return totals
}
