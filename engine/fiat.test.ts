import { fc, test } from '@fast-check/vitest'
import Decimal from 'decimal.js'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { InvalidInputError } from './errors.ts'
import { FIAT_DECIMALS, fiatValue, formatPrice } from './fiat.ts'
import { parseFraction } from './units.ts'

/**
 * The reference: decimal.js with enough precision for the whole product (|amount| < 2^256 and |answer| < 2^255
 * have at most 78 and 77 digits: 200 significant digits hold any product exactly), rounded once,
 * ROUND_HALF_EVEN, to 8 places, trailing zeros trimmed.
 */
const Ref = Decimal.clone({
  precision: 200,
  rounding: Decimal.ROUND_HALF_EVEN,
  toExpNeg: -9e15,
  toExpPos: 9e15,
})
const exactOf = (amount: bigint, answer: bigint, decimals: number) =>
  new Ref(amount.toString()).mul(answer.toString()).div(new Ref(10).pow(18 + decimals))
function reference(amount: bigint, answer: bigint, decimals: number): string {
  const fixed = exactOf(amount, answer, decimals)
    .toDecimalPlaces(FIAT_DECIMALS, Decimal.ROUND_HALF_EVEN)
    .toFixed()
  const trimmed = fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed
  return trimmed === '-0' ? '0' : trimmed
}

const amount = fc.bigInt({ min: -(2n ** 256n) + 1n, max: 2n ** 256n - 1n })
const smallAmount = fc.bigInt({ min: -(10n ** 24n), max: 10n ** 24n })
const answer = fc.oneof(fc.bigInt({ min: 1n, max: 10n ** 14n }), fc.bigInt({ min: 1n, max: 2n ** 255n - 1n }))
const decimals = fc.integer({ min: 0, max: 30 })
/** Inputs whose exact value is a tie at the 9th place: (k + 1/2) x 10^-8, as (2k+1) x 5 x 10^(9-p) wei at 10^p. */
const tie = fc
  .tuple(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.integer({ min: 0, max: 6 }), decimals)
  .map(
    ([k, p, dec]) =>
      [(2n * k + 1n) * 5n * 10n ** BigInt(9 - p), 10n ** BigInt(dec + p), dec] as [bigint, bigint, number],
  )
const inputs = fc.oneof(fc.tuple(amount, answer, decimals), tie)

describe('fiatValue', () => {
  test('behavior: ETH x price, 8 places, trailing zeros trimmed', () => {
    expect(fiatValue(2n * 10n ** 18n, 312_345_678_901n, 8)).toBe('6246.91357802')
    expect(fiatValue(10n ** 18n, 300_000_000_000n, 8)).toBe('3000')
    expect(fiatValue(0n, 300_000_000_000n, 8)).toBe('0')
    expect(fiatValue(1n, 300_000_000_000n, 8)).toBe('0') // 3e-15 rounds to 0
    expect(fiatValue(10n ** 18n, 1n, 0)).toBe('1')
    expect(fiatValue(123n * 10n ** 16n, 25n, 1)).toBe('3.075')
  })

  test('behavior: a tie at the 9th place goes to the even 8th digit (ROUND_HALF_EVEN), not up', () => {
    const one = 100_000_000n // a price of 1 with 8 decimals: the value is the ETH amount
    expect(fiatValue(5_000_000_000n, one, 8)).toBe('0') // 0.000000005 -> 0.00000000
    expect(fiatValue(15_000_000_000n, one, 8)).toBe('0.00000002') // 0.000000015 -> 0.00000002
    expect(fiatValue(25_000_000_000n, one, 8)).toBe('0.00000002') // 0.000000025 -> 0.00000002
    expect(fiatValue(25_000_000_001n, one, 8)).toBe('0.00000003') // just above the tie: up
    expect(fiatValue(24_999_999_999n, one, 8)).toBe('0.00000002') // just below: down
    expect(fiatValue(-15_000_000_000n, one, 8)).toBe('-0.00000002')
    expect(fiatValue(-5_000_000_000n, one, 8)).toBe('0') // never '-0'
    expect(fiatValue(1_500_000_000_000_000_000n, 312_345_678_901n, 8)).toBe('4685.18518352')
  })

  test('behavior: decimals outside [0, 77] or not an integer are refused', () => {
    expect(() => fiatValue(1n, 1n, -1)).toThrow(InvalidInputError)
    expect(() => fiatValue(1n, 1n, 1.5)).toThrow(InvalidInputError)
    expect(() => fiatValue(1n, 1n, 78)).toThrow(InvalidInputError)
  })

  test.prop([inputs], { numRuns: runs(500) })(
    'property: equals decimal.js at 200 digits, rounded once ROUND_HALF_EVEN to 8 places (ties included)',
    ([wei, price, dec]) => {
      expect(fiatValue(wei, price, dec)).toBe(reference(wei, price, dec))
    },
  )

  test.prop([smallAmount, answer, decimals], { numRuns: runs(500) })(
    'property: within half a unit of the 8th place of the exact product',
    (wei, price, dec) => {
      const { num, den } = parseFraction(fiatValue(wei, price, dec))
      // |num/den - wei*price/10^(18+dec)| <= 1/(2*10^8), cross-multiplied in integers
      const scale = 10n ** BigInt(18 + dec)
      const diff = num * scale - wei * price * den
      const abs = diff < 0n ? -diff : diff
      expect(abs * 2n * 10n ** 8n <= den * scale).toBe(true)
    },
  )

  test.prop([fc.bigInt({ min: 0n, max: 10n ** 20n }), decimals], { numRuns: runs(300) })(
    'property: a value exactly halfway between two 8-place values rounds to the one with the even last digit',
    (q, dec) => {
      // (q + 1/2) x 10^-8 ETH at a price of exactly 1
      const wei = (2n * q + 1n) * 5_000_000_000n
      const expected = q % 2n === 0n ? q : q + 1n
      const { num, den } = parseFraction(fiatValue(wei, 10n ** BigInt(dec), dec))
      expect(num * 10n ** 8n).toBe(expected * den)
    },
  )

  test.prop([amount, answer, decimals], { numRuns: runs(300) })(
    'property: sign symmetry: the value of -x is minus the value of x (and of a negative price alike)',
    (wei, price, dec) => {
      const positive = fiatValue(wei < 0n ? -wei : wei, price, dec)
      const negated = positive === '0' ? '0' : `-${positive}`
      expect(fiatValue(wei < 0n ? wei : -wei, price, dec)).toBe(negated)
      expect(fiatValue(wei < 0n ? -wei : wei, -price, dec)).toBe(negated)
    },
  )
})

describe('formatPrice', () => {
  test('behavior: the answer over 10^decimals, exact, trailing zeros trimmed', () => {
    expect(formatPrice(312_345_678_901n, 8)).toBe('3123.45678901')
    expect(formatPrice(300_000_000_000n, 8)).toBe('3000')
    expect(formatPrice(1n, 8)).toBe('0.00000001')
    expect(() => formatPrice(1n, -1)).toThrow(InvalidInputError)
  })

  test.prop([answer, decimals], { numRuns: runs(300) })(
    'property: exact (decimal.js agrees digit for digit)',
    (price, dec) => {
      const expected = new Ref(price.toString()).div(new Ref(10).pow(dec)).toFixed()
      const trimmed = expected.includes('.') ? expected.replace(/0+$/, '').replace(/\.$/, '') : expected
      expect(formatPrice(price, dec)).toBe(trimmed)
    },
  )
})
