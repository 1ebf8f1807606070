import { CUMULATIVE_FIELDS, type PeriodField } from '../fields/record-fields.ts'
import type { PreparedDiscount } from './discount.ts'
import { prepareDiscount } from './discount.ts'
import { computeEarnedAmounts, type EarnedAmounts, type EarnedField, FLOW_FIELDS } from './period-amounts.ts'
import type { ReportContext } from './wallet-record.ts'

/**
 * The amounts of a dormant wallet's record: a wallet with no transfer in the report's period (no mint, no
 * burn, nothing moved by the report transaction), whose earning shares are its previous balance. Its record
 * follows from that balance, its attribution (on-platform, target fee rate) and the report's constants alone:
 * `computeEarnedAmounts`, as in `computeWalletRecord` (a property test holds the two equal to the wei), without
 * the record object, its totals and the per-wallet input checks, for the day pipeline's hot path.
 */

/** Period amounts of a record that are always zero for a dormant wallet (it moved nothing). */
export const DORMANT_ZERO_FIELDS = FLOW_FIELDS

const zeroForDormant: ReadonlySet<string> = new Set(DORMANT_ZERO_FIELDS)

/**
 * The amount fields a dormant wallet's record can hold other than zero (plus its unchanged balance): the
 * balance and the period amounts, less `DORMANT_ZERO_FIELDS`, in table order.
 */
export const DORMANT_AMOUNT_FIELDS: readonly EarnedField[] = [
  'balance_lseth',
  'balance_eth',
  ...CUMULATIVE_FIELDS.map(([period]) => period).filter(
    (field): field is Exclude<PeriodField, (typeof FLOW_FIELDS)[number]> => !zeroForDormant.has(field),
  ),
]

/** A dormant wallet's amounts (its record's `DORMANT_AMOUNT_FIELDS`). */
export type DormantAmounts = EarnedAmounts

/** What a dormant wallet's amounts depend on besides its balance: shared by every wallet of its kind. */
export interface DormantClass {
  on_platform: boolean
  discount: PreparedDiscount
}

/**
 * The class of a dormant wallet at a report: on-platform or not, and the discount of its target (a target
 * counts only on-platform, as in `computeWalletRecord`). Prepare it once per kind of wallet.
 *
 * @example
 * const offPlatform = prepareDormantClass(ctx, false, null)
 */
export function prepareDormantClass(
  ctx: ReportContext,
  onPlatform: boolean,
  targetFeeRate: string | null,
): DormantClass {
  const target = onPlatform ? targetFeeRate : null
  return { on_platform: onPlatform, discount: prepareDiscount(ctx.global_fee_bps, target) }
}

/**
 * The amounts of a dormant wallet holding `balance` shares (its previous record's balance, >= 0) at the
 * report of `ctx`: gross = floor(balance x gross_step), net = floor(balance x net_step), fees = gross - net,
 * the fee split, the rebate and the LsETH conversions, each floored as in `computeWalletRecord`. Its totals
 * are the previous totals plus these amounts.
 *
 * @example
 * computeDormantAmounts(ctx, prepareDormantClass(ctx, false, null), 100n * 10n ** 18n).rewards_eth
 * // 90009000900090009n (the same as computeWalletRecord with shares = the balance and nothing moved)
 */
export function computeDormantAmounts(
  ctx: ReportContext,
  cls: DormantClass,
  balance: bigint,
): DormantAmounts {
  return computeEarnedAmounts(ctx, cls.on_platform, cls.discount, balance, balance)
}
