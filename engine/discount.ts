import { InvalidInputError } from './errors.ts'
import { BASIS_POINTS, feeBpsToBigint, sharesFromUnderlying } from './rates.ts'
import type { Fraction } from './units.ts'
import { floorDiv, formatRatio, maxBigint, minBigint, parseUnits18, WEI_PER_ETH } from './units.ts'

/**
 * Discount and rebate (v0 fields): an account's target fee rate t lowers the fee its on-platform wallets pay
 * by discount_rate = max(0, g - t), g = global fee; the platform pays the rebate out of its own share.
 */

/** A target fee rate and the discount it gives at one report, prepared for the hot path. */
export interface PreparedDiscount {
  /** The target in force (null: none). */
  target_fee_rate: string | null
  /** max(0, g - t) as an exact decimal string ('0' without a target). */
  discount_rate: string
  /** discount_rate as an exact fraction. */
  discount: Fraction
}

/** The rebate of one wallet for one report. */
export interface Rebate {
  /** min(platform fee, floor(fee-bearing rewards x discount_rate)), never negative. */
  rebate_eth: bigint
  /** floor(rebate_eth x S / U): the rebate in LsETH at the report's post-fee rate. */
  rebate_lseth: bigint
  /** platform_fees_eth - rebate_eth. */
  platform_fees_at_discount_rate_eth: bigint
  /** True when the platform fee capped the rebate. */
  capped: boolean
}

function parseTarget(target: string): bigint {
  let units: bigint
  try {
    units = parseUnits18(target, 'target_fee_rate')
  } catch (cause) {
    throw new InvalidInputError('target_fee_rate must be a decimal fraction with at most 18 digits', {
      code: 'TARGET_FEE_RATE_OUT_OF_RANGE',
      details: { target_fee_rate: target },
      cause,
    })
  }
  if (units < 0n || units > WEI_PER_ETH) {
    throw new InvalidInputError('target_fee_rate must be between 0 and 1', {
      code: 'TARGET_FEE_RATE_OUT_OF_RANGE',
      details: { target_fee_rate: target },
    })
  }
  return units
}

/**
 * The check to run when an account POSTs a target: 0 <= t <= g (g = the global fee now). Returns the target
 * normalized (exact, trailing zeros trimmed); throws `InvalidInputError` (TARGET_FEE_RATE_OUT_OF_RANGE).
 *
 * @example
 * validateTargetFeeRate('0.080', 1000) // '0.08'
 * validateTargetFeeRate('0.2', 1000) // throws: above the gross fee rate 0.1
 */
export function validateTargetFeeRate(target: string, globalFeeBps: number | bigint): string {
  const units = parseTarget(target)
  const bps = feeBpsToBigint(globalFeeBps)
  if (units * BASIS_POINTS > bps * WEI_PER_ETH) {
    throw new InvalidInputError('target_fee_rate must not exceed the gross protocol fee rate', {
      code: 'TARGET_FEE_RATE_OUT_OF_RANGE',
      details: { target_fee_rate: target, gross_protocol_fee_rate: formatRatio(bps, BASIS_POINTS) },
    })
  }
  return formatRatio(units, WEI_PER_ETH)
}

/**
 * Prepares the discount of a target at a report with global fee `globalFeeBps`: discount = max(0, g - t).
 * A target above g (possible when the global fee fell after the target was set) gives no discount rather
 * than failing the day; a target outside [0, 1] or with more than 18 digits throws.
 *
 * @example
 * prepareDiscount(1000, '0.08').discount_rate // '0.02'
 * prepareDiscount(1000, null).discount_rate // '0'
 */
export function prepareDiscount(globalFeeBps: number | bigint, target: string | null): PreparedDiscount {
  const bps = feeBpsToBigint(globalFeeBps)
  if (target === null) return { target_fee_rate: null, discount_rate: '0', discount: { num: 0n, den: 1n } }
  const units = parseTarget(target)
  // exact: g - t = (bps * 1e18 - t_units * 1e4) / (1e4 * 1e18)
  const num = maxBigint(0n, bps * WEI_PER_ETH - units * BASIS_POINTS)
  const den = BASIS_POINTS * WEI_PER_ETH
  return { target_fee_rate: target, discount_rate: formatRatio(num, den), discount: { num, den } }
}

/**
 * A wallet's rebate: rebate_eth = min(platform fee, floor(base x discount)) (0 when base <= 0), where the
 * fee-bearing rewards base = `baseNum / baseDen` wei (fee-base.ts: the gross rewards, `baseDen` 1; or the
 * fee / g on a report where River charged more than the pool gained, fees x 10000 / bps);
 * rebate_lseth = floor(rebate_eth x S / U); platform_fees_at_discount_rate_eth = platform fee - rebate.
 *
 * @example
 * computeRebate(prepareDiscount(1000, '0.08'), 10n ** 18n, 25n * 10n ** 15n, 1n, 1n)
 * // { rebate_eth: 20000000000000000n, rebate_lseth: 20000000000000000n,
 * //   platform_fees_at_discount_rate_eth: 5000000000000000n, capped: false }
 * computeRebate(prepareDiscount(1500, '0.12'), 15n * 10_000n, 4n, 1n, 1n, 1500n).rebate_eth // 3n (base 100 wei)
 */
export function computeRebate(
  prepared: PreparedDiscount,
  baseNum: bigint,
  platformFeesEth: bigint,
  underlying: bigint,
  supply: bigint,
  baseDen = 1n,
): Rebate {
  if (platformFeesEth < 0n) {
    throw new InvalidInputError('platform fee must not be negative', {
      details: { value: String(platformFeesEth) },
    })
  }
  if (baseDen <= 0n) {
    throw new InvalidInputError('the fee-bearing rewards denominator must be positive', {
      details: { value: String(baseDen) },
    })
  }
  if (prepared.discount.num === 0n || baseNum <= 0n) {
    return {
      rebate_eth: 0n,
      rebate_lseth: 0n,
      platform_fees_at_discount_rate_eth: platformFeesEth,
      capped: false,
    }
  }
  // rounding: floor of base x discount, then capped at the platform fee
  const uncapped = floorDiv(baseNum * prepared.discount.num, baseDen * prepared.discount.den)
  const rebate = minBigint(uncapped, platformFeesEth)
  return {
    rebate_eth: rebate,
    // rounding: floor (LsETH at the post-fee rate)
    rebate_lseth: sharesFromUnderlying(rebate, underlying, supply),
    platform_fees_at_discount_rate_eth: platformFeesEth - rebate,
    capped: uncapped > platformFeesEth,
  }
}
