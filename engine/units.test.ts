import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { Dec, formatDec } from './decimal.ts'
import { InvalidInputError } from './errors.ts'
import {
  ceilDiv,
  floorDiv,
  formatRatio,
  formatUnits,
  formatUnits18,
  maxBigint,
  minBigint,
  parseFraction,
  parseUnits,
  parseUnits18,
} from './units.ts'

const anyAmount = fc.bigInt({ min: -(2n ** 256n), max: 2n ** 256n })

describe('formatUnits18', () => {
  test('behavior: formats wei exactly, trailing zeros trimmed, no exponent', () => {
    expect(formatUnits18(0n)).toBe('0')
    expect(formatUnits18(1n)).toBe('0.000000000000000001')
    expect(formatUnits18(-1n)).toBe('-0.000000000000000001')
    expect(formatUnits18(1_500_000_000_000_000_000n)).toBe('1.5')
    expect(formatUnits18(10n ** 30n)).toBe('1000000000000')
    expect(formatUnits(1234500n, 6)).toBe('1.2345')
  })

  test.prop([anyAmount], { numRuns: runs(300) })('property: parseUnits18 inverts formatUnits18', (wei) => {
    expect(parseUnits18(formatUnits18(wei))).toBe(wei)
  })
})

describe('parseUnits18', () => {
  test('behavior: parses exact decimals and rejects anything else', () => {
    expect(parseUnits18('1')).toBe(10n ** 18n)
    expect(parseUnits18('0.000000000000000001')).toBe(1n)
    expect(parseUnits18('-2.5')).toBe(-2_500_000_000_000_000_000n)
    expect(parseUnits('7', 0)).toBe(7n)
    for (const bad of ['', '1e18', '0.0000000000000000001', ' 1', '1.', '.5', '+1', 'NaN', '0x10']) {
      expect(() => parseUnits18(bad), bad).toThrow(InvalidInputError)
    }
  })
})

describe('parseFraction', () => {
  test('behavior: returns num / 10^digits exactly', () => {
    expect(parseFraction('0.125')).toEqual({ num: 125n, den: 1000n })
    expect(parseFraction('-3')).toEqual({ num: -3n, den: 1n })
    expect(() => parseFraction('1/3')).toThrow(InvalidInputError)
  })
})

describe('floorDiv', () => {
  test('behavior: rounds toward minus infinity, ceilDiv toward plus infinity', () => {
    expect(floorDiv(7n, 2n)).toBe(3n)
    expect(floorDiv(-7n, 2n)).toBe(-4n)
    expect(floorDiv(7n, -2n)).toBe(-4n)
    expect(floorDiv(-8n, 2n)).toBe(-4n)
    expect(ceilDiv(7n, 2n)).toBe(4n)
    expect(ceilDiv(-7n, 2n)).toBe(-3n)
    expect(minBigint(1n, 2n)).toBe(1n)
    expect(maxBigint(1n, 2n)).toBe(2n)
  })

  test.prop([anyAmount, anyAmount.filter((b) => b !== 0n)], { numRuns: runs(300) })(
    'property: floorDiv equals the decimal.js floor of the exact quotient',
    (a, b) => {
      const expected = new Dec(a.toString()).div(b.toString()).toDecimalPlaces(0, Dec.ROUND_FLOOR).toFixed()
      expect(floorDiv(a, b).toString()).toBe(expected)
    },
  )
})

describe('formatRatio', () => {
  test('behavior: 18 digits, ROUND_DOWN toward zero, trimmed', () => {
    expect(formatRatio(2n, 3n)).toBe('0.666666666666666666')
    expect(formatRatio(-2n, 3n)).toBe('-0.666666666666666666')
    expect(formatRatio(1001n, 1000n)).toBe('1.001')
    expect(formatRatio(1n, 10n ** 19n)).toBe('0')
    expect(formatRatio(-1n, 10n ** 19n)).toBe('0')
    expect(formatRatio(1n, 3n, 2)).toBe('0.33')
    expect(() => formatRatio(1n, 0n)).toThrow(InvalidInputError)
  })

  test.prop([fc.bigInt({ min: -(10n ** 60n), max: 10n ** 60n }), fc.bigInt({ min: 1n, max: 10n ** 40n })], {
    numRuns: runs(300),
  })('property: equals the decimal.js path (ROUND_DOWN at 18 places)', (num, den) => {
    expect(formatRatio(num, den)).toBe(formatDec(new Dec(num.toString()).div(den.toString())))
  })
})
