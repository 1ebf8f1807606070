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
  /**
   * fee / fee-bearing rewards of the report, exact: g under `charged`; under `gross`, g when the fee is g x gross
   * to the chain's roundings (`preFee` given: see `reportFeeBase`), else fee / gross (0 when gross <= 0 or no
   * fee).
   */
  fee_of_base: Fraction
}

/** The report's pool at its fee mint: Um (wei) and S0 (shares before the mint), whose ratio is one share's value. */
export interface PreFeePool {
  underlying: bigint
  supply: bigint
}

/** The relative part of the shortfall `feeIsGOfGross` allows: one part in 10^12 of g x gross. */
const SHORTFALL_PARTS = 10n ** 12n

/**
 * Whether a report's fee (per-share step `fee`) is g x its gross rewards (per-share step `gross`) to the chain's
 * roundings. River mints floor(r x S0 x g / (Um - r x g)) shares, so the fee falls short of g x r by less than
 * one share's value Um / S0; and r itself is short of the gross rewards by the rounding, in the pool's favour, of
 * every deposit and burn since the previous report (less than one share's value each). So the shortfall over the
 * report, D = (g x gross - fee) x S0 wei, is allowed less than two shares' value plus one part in 10^12 of
 * g x gross (a busy day's many transfers), exactly: with D = N x S0 / den,
 * N x S0^2 x 10^12 < 2 x Um x den x 10^12 + bps x grossNum x feeDen x S0^2, and N >= 0.
 */
function feeIsGOfGross(gross: Fraction, fee: Fraction, bps: bigint, pool: PreFeePool): boolean {
  // g x gross - fee = (bps x grossNum x feeDen - 10000 x feeNum x grossDen) / (10000 x grossDen x feeDen)
  const num = bps * gross.num * fee.den - BASIS_POINTS * fee.num * gross.den
  const den = BASIS_POINTS * gross.den * fee.den
  const s2 = pool.supply * pool.supply
  return (
    num >= 0n &&
    num * s2 * SHORTFALL_PARTS < 2n * pool.underlying * den * SHORTFALL_PARTS + bps * gross.num * fee.den * s2
  )
}

/**
 * The fee base of a report from its exact per-share steps: `charged` when a fee was minted (fee step > 0), the
 * global fee is positive and fee step > g x gross step (gross step <= 0 included); else `gross`. On every
 * report where the pool gained at least what River charged on, the fee is at most g x gross (the collector's
 * mint is floored), so those keep the gross rewards as their base. The ratio fee / base is g on a `charged`
 * report, and on a `gross` report whose fee is g x gross to the chain's roundings (`preFee`, the pool at the
 * mint, given: `feeIsGOfGross`): the rates are formed from the configured fee, not from the rounded wei of the mint (0.035, not
 * 0.034999999999999999). Any other `gross` report keeps the measured fee / gross.
 *
 * @example
 * // a 0.02 ETH loss and 0.003 ETH of EL fees: gross < 0, a fee minted at 15 %
 * reportFeeBase({ num: -17n, den: 1000n }, { num: 45n, den: 100000n }, 1500n)
 * // { fee_base: 'charged', fee_of_base: { num: 1500n, den: 10000n } }
 * // a fee one wei short of 10 % of 1 ETH of gross rewards (1000 LsETH at 1.001): g itself
 * reportFeeBase({ num: 1n, den: 1000n }, { num: 99999999999999999n, den: 10n ** 21n }, 1000n,
 *   { underlying: 1001n * 10n ** 18n, supply: 1000n * 10n ** 18n })
 * // { fee_base: 'gross', fee_of_base: { num: 1000n, den: 10000n } }
 */
export function reportFeeBase(
  grossStep: Fraction,
  feeStep: Fraction,
  bps: bigint,
  preFee?: PreFeePool,
): ReportFeeBase {
  // fee > g x gross <=> feeNum x grossDen x 10000 > bps x grossNum x feeDen (denominators positive)
  if (
    feeStep.num > 0n &&
    bps > 0n &&
    feeStep.num * grossStep.den * BASIS_POINTS > bps * grossStep.num * feeStep.den
  ) {
    return { fee_base: 'charged', fee_of_base: { num: bps, den: BASIS_POINTS } }
  }
  if (feeStep.num <= 0n || grossStep.num <= 0n)
    return { fee_base: 'gross', fee_of_base: { num: 0n, den: 1n } }
  if (preFee !== undefined && feeIsGOfGross(grossStep, feeStep, bps, preFee)) {
    return { fee_base: 'gross', fee_of_base: { num: bps, den: BASIS_POINTS } }
  }
  return {
    fee_base: 'gross',
    fee_of_base: { num: feeStep.num * grossStep.den, den: feeStep.den * grossStep.num },
  }
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
