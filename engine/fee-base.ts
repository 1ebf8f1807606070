import { BASIS_POINTS } from './rates.ts'
import type { Fraction } from './units.ts'

/**
 * The fee-bearing rewards: what the fee rates (`period_*_rate`, the fee records' `*_rate`) and the discount
 * (`rebate_eth`) are measured against. Normally the gross rewards. River 1.x charges its fee on
 * `trace.rewards` = max(0, consensus-layer change) + execution-layer fees, so on a report where the validators
 * lose balance while execution-layer fees arrive it mints a fee although the pool gained less than that (or
 * nothing): the fee exceeds g x gross. For such a report the fee-bearing rewards are what the fee was charged
 * on, fee / g: a wallet's pro-rata share of `trace.rewards` to the on-chain floor of the fee mint.
 */

/**
 * Which rewards a report's rates and rebates are measured against: `gross` (fee <= g x gross: every legacy
 * report and every report whose rewards are at least what River charged on) or `charged` (fee > g x gross:
 * River charged more than the pool gained, so the rewards it charged are fee / g).
 */
export type FeeBase = 'gross' | 'charged'

/** A report's fee base and the exact ratio fee / fee-bearing rewards. */
export interface ReportFeeBase {
  fee_base: FeeBase
  /** fee / fee-bearing rewards of the report, exact: fee / gross under `gross` (0 when gross <= 0), g under `charged`. */
  fee_of_base: Fraction
}

/**
 * The fee base of a report from its exact per-share steps: `charged` when a fee was minted (fee step > 0), the
 * global fee is positive and fee step > g x gross step (gross step <= 0 included); else `gross`. On every
 * report where the pool gained at least what River charged on, the fee is at most g x gross (the collector's
 * mint is floored), so those keep the gross rewards as their base.
 *
 * @example
 * // a 0.02 ETH loss and 0.003 ETH of EL fees: gross < 0, a fee minted at 15 %
 * reportFeeBase({ num: -17n, den: 1000n }, { num: 45n, den: 100000n }, 1500n)
 * // { fee_base: 'charged', fee_of_base: { num: 1500n, den: 10000n } }
 */
export function reportFeeBase(grossStep: Fraction, feeStep: Fraction, bps: bigint): ReportFeeBase {
  // fee > g x gross <=> feeNum x grossDen x 10000 > bps x grossNum x feeDen (denominators positive)
  if (
    feeStep.num > 0n &&
    bps > 0n &&
    feeStep.num * grossStep.den * BASIS_POINTS > bps * grossStep.num * feeStep.den
  ) {
    return { fee_base: 'charged', fee_of_base: { num: bps, den: BASIS_POINTS } }
  }
  const feeOfGross =
    feeStep.num > 0n && grossStep.num > 0n
      ? { num: feeStep.num * grossStep.den, den: feeStep.den * grossStep.num }
      : { num: 0n, den: 1n }
  return { fee_base: 'gross', fee_of_base: feeOfGross }
}

/**
 * The fee-bearing rewards of a wallet (or of a group of wallets of one report) as an exact fraction of wei:
 * its gross rewards under `gross`; its fee / g under `charged` (g = bps / 10000 > 0).
 *
 * @example
 * feeBearingRewards('gross', 100n, 10n, 1000n) // { num: 100n, den: 1n }
 * feeBearingRewards('charged', -50n, 15n, 1500n) // { num: 150000n, den: 1500n } (100 wei)
 */
export function feeBearingRewards(base: FeeBase, grossEth: bigint, feesEth: bigint, bps: bigint): Fraction {
  return base === 'charged' ? { num: feesEth * BASIS_POINTS, den: bps } : { num: grossEth, den: 1n }
}
