import { InvalidInputError } from './errors.ts'

/**
 * Exact integer helpers for wei and share amounts (no floats, no decimal.js): formatting to decimal
 * strings, strict parsing, floor division and exact ratios.
 */

/** 10^18: wei per ETH, and share units per LsETH. */
export const WEI_PER_ETH = 10n ** 18n

const DECIMAL_STRING = /^(-)?(\d+)(?:\.(\d+))?$/

/** The sign, whole and fraction digits of a plain decimal string; InvalidInputError (INVALID_DECIMAL) otherwise. */
function matchDecimal(value: string, field: string): RegExpExecArray {
  const match = DECIMAL_STRING.exec(value)
  if (!match) {
    throw new InvalidInputError(`${field} must be a plain decimal string`, {
      code: 'INVALID_DECIMAL',
      details: { field, value },
    })
  }
  return match
}

/**
 * Formats an integer amount with `decimals` implied decimals: exact, trailing zeros trimmed.
 *
 * @example
 * formatUnits(1234500n, 6) // '1.2345'
 */
export function formatUnits(value: bigint, decimals: number): string {
  const negative = value < 0n
  const abs = negative ? -value : value
  const base = 10n ** BigInt(decimals)
  const integer = abs / base
  const fraction = abs % base
  let text = integer.toString()
  if (fraction !== 0n) text += '.' + fraction.toString().padStart(decimals, '0').replace(/0+$/, '')
  return negative ? '-' + text : text
}

/**
 * Formats wei (or LsETH share units) as an ETH (LsETH) decimal string, exact: at most 18 fractional digits,
 * trailing zeros trimmed. This is how amounts leave the API.
 *
 * @example
 * formatUnits18(1500000000000000000n) // '1.5'
 * formatUnits18(-1n) // '-0.000000000000000001'
 */
export function formatUnits18(wei: bigint): string {
  return formatUnits(wei, 18)
}

/**
 * Parses a plain decimal string into an integer with `decimals` implied decimals, exactly. More fractional
 * digits than `decimals`, exponents, signs other than a leading '-', or blanks throw `InvalidInputError`.
 *
 * @example
 * parseUnits('1.5', 18) // 1500000000000000000n
 */
export function parseUnits(value: string, decimals: number, field = 'value'): bigint {
  const match = matchDecimal(value, field)
  const fraction = match[3] ?? ''
  if (fraction.length > decimals) {
    throw new InvalidInputError(`${field} has more than ${decimals} fractional digits`, {
      code: 'INVALID_DECIMAL',
      details: { field, value },
    })
  }
  const units = BigInt((match[2] ?? '0') + fraction.padEnd(decimals, '0'))
  return match[1] ? -units : units
}

/**
 * Parses an ETH / LsETH decimal string into wei exactly (at most 18 fractional digits).
 *
 * @example
 * parseUnits18('0.000000000000000001') // 1n
 */
export function parseUnits18(value: string, field = 'value'): bigint {
  return parseUnits(value, 18, field)
}

/** An exact rational number num/den with den > 0. */
export interface Fraction {
  num: bigint
  den: bigint
}

/**
 * Parses a plain decimal string into the exact fraction num / 10^digits.
 *
 * @example
 * parseFraction('0.125') // { num: 125n, den: 1000n }
 */
export function parseFraction(value: string, field = 'value'): Fraction {
  const match = matchDecimal(value, field)
  const fraction = match[3] ?? ''
  const num = BigInt((match[2] ?? '0') + fraction)
  return { num: match[1] ? -num : num, den: 10n ** BigInt(fraction.length) }
}

/**
 * Floor division (toward minus infinity) of bigints; JavaScript's `/` truncates toward zero instead.
 *
 * @example
 * floorDiv(-7n, 2n) // -4n
 * floorDiv(7n, 2n) // 3n
 */
export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b
  // rounding: floor. Truncation is already the floor unless the signs differ and there is a remainder (the
  // sign test first: the hot path's operands are non-negative and skip the remainder)
  return a < 0n !== b < 0n && q * b !== a ? q - 1n : q
}

/**
 * Ceiling division (toward plus infinity) of bigints.
 *
 * @example
 * ceilDiv(7n, 2n) // 4n
 */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return -floorDiv(-a, b)
}

/**
 * The decimal string of num/den with at most `dp` fractional digits, ROUND_DOWN (toward zero), trailing
 * zeros trimmed. Used for rates (`conversion_rate`, fee rates).
 *
 * @example
 * formatRatio(2n, 3n) // '0.666666666666666666'
 * formatRatio(1001n, 1000n) // '1.001'
 */
export function formatRatio(num: bigint, den: bigint, dp = 18): string {
  if (den === 0n) throw new InvalidInputError('ratio denominator is zero', { details: { num: String(num) } })
  const negative = num < 0n !== den < 0n && num !== 0n
  const absNum = num < 0n ? -num : num
  const absDen = den < 0n ? -den : den
  // rounding: ROUND_DOWN (truncate toward zero) at dp places
  const scaled = (absNum * 10n ** BigInt(dp)) / absDen
  return formatUnits(negative ? -scaled : scaled, dp)
}

/**
 * The smaller of two bigints.
 *
 * @example
 * minBigint(3n, 2n) // 2n
 */
export function minBigint(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}

/**
 * The larger of two bigints.
 *
 * @example
 * maxBigint(3n, 2n) // 3n
 */
export function maxBigint(a: bigint, b: bigint): bigint {
  return a > b ? a : b
}
