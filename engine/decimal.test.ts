import { describe, expect, test } from 'vitest'
import { Dec, decFloorToBigint, formatDec, ROUND_DOWN, toDec } from './decimal.ts'
import { InvalidInputError } from './errors.ts'

describe('Dec', () => {
  test('behavior: is a private clone with 80 digits and ROUND_DOWN', () => {
    expect(Dec.precision).toBe(80)
    expect(Dec.rounding).toBe(ROUND_DOWN)
    expect(new Dec(2).div(3).toFixed()).toBe(`0.${'6'.repeat(80)}`)
    expect(new Dec('1e-30').toString()).toBe(`0.${'0'.repeat(29)}1`)
  })
})

describe('toDec', () => {
  test('behavior: takes bigints, plain decimal strings and safe integers only', () => {
    expect(toDec(10n ** 40n).toFixed()).toBe(`1${'0'.repeat(40)}`)
    expect(toDec('-0.5').toFixed()).toBe('-0.5')
    expect(toDec(7).toFixed()).toBe('7')
    expect(() => toDec('1e5')).toThrow(InvalidInputError)
    expect(() => toDec(0.1)).toThrow(InvalidInputError)
  })
})

describe('formatDec', () => {
  test('behavior: at most 18 digits rounded down, trailing zeros trimmed, no -0', () => {
    expect(formatDec(new Dec('0.00092101246834370000'))).toBe('0.0009210124683437')
    expect(formatDec(new Dec('1.0000000000000000009'))).toBe('1')
    expect(formatDec(new Dec('-0.0000000000000000009'))).toBe('0')
    expect(formatDec(new Dec('-1.5'))).toBe('-1.5')
    expect(formatDec(new Dec(2).div(3), 4)).toBe('0.6666')
  })
})

describe('decFloorToBigint', () => {
  test('behavior: floors toward minus infinity', () => {
    expect(decFloorToBigint(new Dec('-1.5'))).toBe(-2n)
    expect(decFloorToBigint(new Dec('7.99'))).toBe(7n)
    expect(decFloorToBigint(new Dec('-3'))).toBe(-3n)
  })
})
