import { InvalidInputError } from './errors.ts'
import { formatRatio } from './units.ts'

/**
 * Conversion rates and the fee mint of an oracle report, in exact integers as on chain (PROTOCOL.md):
 * rate = U / S; `underlyingBalanceFromShares(x) = floor(x*U/S)`; fee shares minted
 * `floor(r*S0*f / (Unew*10000 - r*f))`.
 */

/** Basis points in 1 (10000 bps = 100 %). */
export const BASIS_POINTS = 10_000n

function positive(value: bigint, field: string): void {
  if (value <= 0n)
    throw new InvalidInputError(`${field} must be positive`, { details: { field, value: String(value) } })
}

function nonNegative(value: bigint, field: string): void {
  if (value < 0n) {
    throw new InvalidInputError(`${field} must not be negative`, { details: { field, value: String(value) } })
  }
}

/**
 * Validates a global fee in basis points (an integer 0..10000) and returns it as a bigint.
 *
 * @example
 * feeBpsToBigint(1000) // 1000n
 */
export function feeBpsToBigint(feeBps: number | bigint, field = 'global_fee_bps'): bigint {
  const bps = typeof feeBps === 'bigint' ? feeBps : Number.isSafeInteger(feeBps) ? BigInt(feeBps) : -1n
  if (bps < 0n || bps > BASIS_POINTS) {
    throw new InvalidInputError(`${field} must be an integer from 0 to 10000`, {
      details: { field, value: String(feeBps) },
    })
  }
  return bps
}

/**
 * The gross protocol fee rate g = bps / 10000 as an exact decimal string.
 *
 * @example
 * feeRateOfBps(1000) // '0.1'
 */
export function feeRateOfBps(feeBps: number | bigint): string {
  return formatRatio(feeBpsToBigint(feeBps), BASIS_POINTS)
}

/**
 * The conversion rate U / S (ETH per LsETH) as a decimal string, 18 fractional digits at most,
 * ROUND_DOWN, trailing zeros trimmed.
 *
 * @example
 * conversionRate(1001n * 10n ** 18n, 1000n * 10n ** 18n) // '1.001'
 */
export function conversionRate(underlying: bigint, supply: bigint): string {
  nonNegative(underlying, 'underlying')
  positive(supply, 'supply')
  // rounding: ROUND_DOWN at 18 places (formatRatio)
  return formatRatio(underlying, supply, 18)
}

/**
 * ETH value of `shares` exactly as River's `underlyingBalanceFromShares`: floor(shares * U / S), 0 when S = 0.
 *
 * @example
 * underlyingFromShares(10n, 1001n, 1000n) // 10n (floor of 10.01)
 */
export function underlyingFromShares(shares: bigint, underlying: bigint, supply: bigint): bigint {
  if (supply === 0n) return 0n
  // rounding: floor (all operands non-negative, so truncation is the floor)
  return (shares * underlying) / supply
}

/**
 * Shares worth `eth` exactly as River's `sharesFromUnderlyingBalance`: floor(eth * S / U), 0 when U = 0.
 *
 * @example
 * sharesFromUnderlying(1001n, 1001n, 1000n) // 1000n
 */
export function sharesFromUnderlying(eth: bigint, underlying: bigint, supply: bigint): bigint {
  if (underlying === 0n) return 0n
  // rounding: floor (operands non-negative)
  return (eth * supply) / underlying
}

/** Inputs of the fee mint, all integers as on chain. */
export interface FeeMintInput {
  /** r: the report's rewards in wei (trace.rewards); 0 on a loss day. */
  rewards: bigint
  /** S0: total supply (shares) before the fee mint. */
  supplyBefore: bigint
  /** Unew: total underlying (wei) after the report, rewards included. */
  underlyingAfter: bigint
  /** f: global fee in basis points. */
  feeBps: number | bigint
}

/** Result of the fee mint. */
export interface FeeMint {
  /** Shares minted to the collector: floor(r*S0*f / (Unew*10000 - r*f)); 0 when the denominator is 0. */
  shares_minted: bigint
  /** S = S0 + shares_minted. */
  supply_after: bigint
  /** The fee the protocol intends to take, floor(r*f/10000), in wei. */
  fee_eth: bigint
  /** What the collector's shares are worth on chain: floor(shares_minted * Unew / S). */
  collector_eth: bigint
  /** Unew / S0 (before the mint), 18 dp ROUND_DOWN. */
  rate_pre_fee: string
  /** Unew / S (after the mint), 18 dp ROUND_DOWN. */
  rate_post_fee: string
}

/**
 * Fee shares minted at a report, exactly River's `_onEarnings`: floor(r*S0*f / (Unew*10000 - r*f)).
 *
 * @example
 * feeSharesToMint({ rewards: 10n ** 18n, supplyBefore: 1000n * 10n ** 18n, underlyingAfter: 1001n * 10n ** 18n, feeBps: 1000 })
 * // 99910080927165551n
 */
export function feeSharesToMint(input: FeeMintInput): bigint {
  const f = feeBpsToBigint(input.feeBps)
  nonNegative(input.rewards, 'rewards')
  nonNegative(input.supplyBefore, 'supplyBefore')
  nonNegative(input.underlyingAfter, 'underlyingAfter')
  if (input.rewards > input.underlyingAfter) {
    throw new InvalidInputError('rewards exceed the underlying after the report', {
      details: { rewards: String(input.rewards), underlyingAfter: String(input.underlyingAfter) },
    })
  }
  const numerator = input.rewards * input.supplyBefore * f
  const denominator = input.underlyingAfter * BASIS_POINTS - input.rewards * f
  // rounding: floor (on-chain integer division); the contract mints nothing when the denominator is 0
  return denominator === 0n ? 0n : numerator / denominator
}

/**
 * The whole fee mint of a report: shares minted, the supply after, pre- and post-fee rates and what the
 * collector's shares are worth (at most, and within one share's value of, floor(f/10000 * r)).
 *
 * @example
 * computeFeeMint({ rewards: 10n ** 18n, supplyBefore: 1000n * 10n ** 18n, underlyingAfter: 1001n * 10n ** 18n, feeBps: 1000 })
 * // { shares_minted: 99910080927165551n, fee_eth: 100000000000000000n, collector_eth: 99999999999999999n, ... }
 */
export function computeFeeMint(input: FeeMintInput): FeeMint {
  const shares = feeSharesToMint(input)
  positive(input.supplyBefore, 'supplyBefore')
  const supplyAfter = input.supplyBefore + shares
  const f = feeBpsToBigint(input.feeBps)
  return {
    shares_minted: shares,
    supply_after: supplyAfter,
    // rounding: floor
    fee_eth: (input.rewards * f) / BASIS_POINTS,
    collector_eth: underlyingFromShares(shares, input.underlyingAfter, supplyAfter),
    rate_pre_fee: conversionRate(input.underlyingAfter, input.supplyBefore),
    rate_post_fee: conversionRate(input.underlyingAfter, supplyAfter),
  }
}
