import type { PreparedDiscount } from './discount.ts'
import { computeRebate, prepareDiscount } from './discount.ts'
import { splitFee } from './fee-split.ts'
import { sharesFromUnderlying, underlyingFromShares } from './rates.ts'
import { floorDiv } from './units.ts'
import type { ReportContext, WalletRecord } from './wallet-record.ts'

/**
 * The amounts of a dormant wallet's record: a wallet with no transfer in the report's period (no mint, no
 * burn, nothing moved by the report transaction), whose earning shares are its previous balance. Its record
 * follows from that balance, its attribution (on-platform, target fee rate) and the report's constants alone:
 * the same formulas as `computeWalletRecord` (whose property test holds the two equal to the wei), without the
 * record object, its totals and the per-wallet input checks, for the day pipeline's hot path.
 */

/** The amount fields a dormant wallet's record can hold other than zero (plus its unchanged balance). */
export const DORMANT_AMOUNT_FIELDS = [
  'balance_lseth',
  'balance_eth',
  'rewards_eth',
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
] as const satisfies ReadonlyArray<keyof WalletRecord>

/** Period amounts of a record that are always zero for a dormant wallet (it moved nothing). */
export const DORMANT_ZERO_FIELDS = ['mints_lseth', 'burns_lseth', 'mints_eth', 'burns_eth'] as const

/** A dormant wallet's amounts (its record's `DORMANT_AMOUNT_FIELDS`). */
export type DormantAmounts = Pick<WalletRecord, (typeof DORMANT_AMOUNT_FIELDS)[number]>

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
  const U = ctx.underlying
  const S = ctx.supply
  // rounding: floor, once, on the exact rationals balance x step
  const gross = floorDiv(balance * ctx.gross_step.num, ctx.gross_step.den)
  const net = floorDiv(balance * ctx.net_step.num, ctx.net_step.den)
  const fees = gross - net
  const parts = splitFee(ctx.split, fees, cls.on_platform)
  const rebate = computeRebate(cls.discount, gross, parts.platform_fees_eth, U, S)
  return {
    balance_lseth: balance,
    // rounding: floor (the balance at rate_k)
    balance_eth: underlyingFromShares(balance, U, S),
    rewards_eth: net,
    fees_eth: fees,
    // rounding: floor (LsETH at rate_k)
    period_lc_fees_lseth: sharesFromUnderlying(parts.lc_fees_eth, U, S),
    period_tech_provider_fees_lseth: sharesFromUnderlying(parts.tech_provider_fees_eth, U, S),
    platform_fees_eth: parts.platform_fees_eth,
    operator_fees_eth: parts.operator_fees_eth,
    lc_fees_eth: parts.lc_fees_eth,
    tech_provider_fees_eth: parts.tech_provider_fees_eth,
    dao_fees_eth: parts.dao_fees_eth,
    provider_fees_eth: parts.provider_fees_eth,
    slashing_fees_eth: parts.slashing_fees_eth,
    platform_fees_at_discount_rate_eth: rebate.platform_fees_at_discount_rate_eth,
    gross_fees_eth: fees,
    gross_rewards_eth: gross,
    rebate_eth: rebate.rebate_eth,
    rebate_lseth: rebate.rebate_lseth,
  }
}
