import type { PeriodField } from '../fields/record-fields.ts'
import type { PreparedDiscount } from './discount.ts'
import { computeRebate } from './discount.ts'
import { splitFee } from './fee-split.ts'
import { BASIS_POINTS, sharesFromUnderlying, underlyingFromShares } from './rates.ts'
import { floorDiv } from './units.ts'
import type { ReportContext, WalletRecord } from './wallet-record.ts'

/** The period amounts that come from the wallet's own LsETH flows (zero for a wallet that moved nothing). */
export const FLOW_FIELDS = ['mints_lseth', 'burns_lseth', 'mints_eth', 'burns_eth'] as const

/** A field of `EarnedAmounts`: the balance, and every period amount but the flows. */
export type EarnedField = 'balance_lseth' | 'balance_eth' | Exclude<PeriodField, (typeof FLOW_FIELDS)[number]>

/** What a wallet's shares earned at a report, with its balance: a record's amounts less its flows and totals. */
export type EarnedAmounts = Pick<WalletRecord, EarnedField>

/**
 * The earnings of `shares` earning shares at the report of `ctx` for a wallet ending the report with
 * `balance` shares: gross = floor(shares x gross_step), net (rewards_eth) = floor(shares x net_step), fees =
 * gross - net, the fee split (on-platform or not), the rebate at `discount` on the fee-bearing rewards
 * (gross, or fees / g on a `charged` report: fee-base.ts), the LsETH conversions at the
 * report's rate, each floored; `balance_eth` is `balance` at the report's rate (floor). The one definition of
 * a record's earned amounts, for `computeWalletRecord` and the dormant path alike.
 *
 * @example
 * computeEarnedAmounts(ctx, false, noDiscount, 100n * 10n ** 18n, 100n * 10n ** 18n).rewards_eth
 * // 90009000900090009n
 */
export function computeEarnedAmounts(
  ctx: ReportContext,
  onPlatform: boolean,
  discount: PreparedDiscount,
  shares: bigint,
  balance: bigint,
): EarnedAmounts {
  const U = ctx.underlying
  const S = ctx.supply
  // rounding: floor (toward minus infinity), once, on the exact rationals shares x step
  const gross = floorDiv(shares * ctx.gross_step.num, ctx.gross_step.den)
  const net = floorDiv(shares * ctx.net_step.num, ctx.net_step.den)
  const fees = gross - net
  const parts = splitFee(ctx.split, fees, onPlatform)
  // the rebate's base: the gross rewards, or fees / g when River charged more than the pool gained (fee-base.ts)
  const rebate =
    ctx.fee_base === 'charged'
      ? computeRebate(discount, fees * BASIS_POINTS, parts.platform_fees_eth, U, S, ctx.global_fee_bps)
      : computeRebate(discount, gross, parts.platform_fees_eth, U, S)
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
