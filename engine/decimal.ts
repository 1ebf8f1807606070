import Decimal from 'decimal.js'
import { InvalidInputError } from './errors.ts'

/**
 * The engine's one private decimal.js constructor: 80 significant digits, ROUND_DOWN (toward zero) unless a
 * call names another rounding, and never exponent notation in `toString`. Nothing in `engine/` uses the
 * global `Decimal`; everything decimal goes through `Dec`.
 *
 * @example
 * new Dec(1).div(3).toFixed(5) // '0.33333' (ROUND_DOWN)
 */
export const Dec = Decimal.clone({
  precision: 80,
  rounding: Decimal.ROUND_DOWN,
  toExpNeg: -9e15,
  toExpPos: 9e15,
})
/** An instance of the engine's decimal type. */
export type Dec = Decimal

/** decimal.js rounding mode constants, re-exported so callers name the rounding they use. */
export const ROUND_DOWN = Decimal.ROUND_DOWN
/** Round toward minus infinity. */
export const ROUND_FLOOR = Decimal.ROUND_FLOOR
/** Round away from zero. */
export const ROUND_UP = Decimal.ROUND_UP
/** Round half away from zero. */
export const ROUND_HALF_UP = Decimal.ROUND_HALF_UP

const DECIMAL_STRING = /^-?\d+(\.\d+)?$/

/**
 * Builds a `Dec` from a bigint (exact), a plain decimal string (validated, exact) or a safe integer.
 *
 * @example
 * toDec(10n ** 18n).toFixed() // '1000000000000000000'
 * toDec('0.25').mul(4).toFixed() // '1'
 */
export function toDec(value: bigint | string | number, field = 'value'): Dec {
  if (typeof value === 'bigint') return new Dec(value.toString())
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new InvalidInputError(`${field} must be a safe integer`, { details: { field, value } })
    }
    return new Dec(value)
  }
  if (!DECIMAL_STRING.test(value)) {
    throw new InvalidInputError(`${field} must be a plain decimal string`, {
      code: 'INVALID_DECIMAL',
      details: { field, value },
    })
  }
  return new Dec(value)
}

/**
 * Formats a decimal with at most `dp` fractional digits, ROUND_DOWN (toward zero), trailing zeros trimmed,
 * no exponent, no `-0`.
 *
 * @example
 * formatDec(new Dec('0.00092101246834370000')) // '0.0009210124683437'
 * formatDec(new Dec(2).div(3), 4) // '0.6666'
 */
export function formatDec(value: Dec, dp = 18): string {
  // rounding: ROUND_DOWN to dp places (never shows value that does not exist)
  const fixed = value.toDecimalPlaces(dp, ROUND_DOWN).toFixed()
  const trimmed = fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed
  return trimmed === '-0' ? '0' : trimmed
}

/**
 * The integer part of a decimal as a bigint, rounding toward minus infinity (floor).
 *
 * @example
 * decFloorToBigint(new Dec('-1.5')) // -2n
 * decFloorToBigint(new Dec('7.99')) // 7n
 */
export function decFloorToBigint(value: Dec): bigint {
  // rounding: ROUND_FLOOR to an integer
  return BigInt(value.toDecimalPlaces(0, ROUND_FLOOR).toFixed())
}
