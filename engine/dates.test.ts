import { describe, expect, test } from 'vitest'
import { addDaysToDate, isoTimestampOf, parseDateOnly, parseIsoTimestamp, utcDateOf } from './dates.ts'
import { InvalidInputError } from './errors.ts'

describe('utcDateOf', () => {
  test('behavior: gives the UTC date of unix seconds, whatever the machine time zone', () => {
    expect(utcDateOf(1_777_593_600)).toBe('2026-05-01')
    expect(utcDateOf(1_777_593_599)).toBe('2026-04-30')
    expect(isoTimestampOf(1_777_593_600)).toBe('2026-05-01T00:00:00Z')
    expect(() => utcDateOf(-1)).toThrow(InvalidInputError)
    expect(() => utcDateOf(1.5)).toThrow(InvalidInputError)
  })
})

describe('parseDateOnly', () => {
  test('behavior: accepts calendar dates only', () => {
    expect(parseDateOnly('2026-05-01')).toBe(1_777_593_600)
    expect(parseDateOnly('2024-02-29')).toBe(1_709_164_800)
    expect(parseDateOnly('1970-01-01')).toBe(0)
    expect(parseDateOnly('9999-12-31')).toBe(253_402_214_400)
    // years the database cannot store (0000) or before any chain data: refused by the one date check
    for (const bad of [
      '2026-02-30',
      '2026-5-1',
      '2026-05-01T00:00:00Z',
      '',
      '20260501',
      '0000-01-01',
      '1969-12-31',
    ]) {
      expect(() => parseDateOnly(bad), bad).toThrow(InvalidInputError)
    }
    expect(addDaysToDate('2026-04-30', 1)).toBe('2026-05-01')
    expect(addDaysToDate('2026-03-01', -1)).toBe('2026-02-28')
  })
})

describe('parseIsoTimestamp', () => {
  test('behavior: needs an explicit zone', () => {
    expect(parseIsoTimestamp('2026-05-01T00:00:00Z')).toBe(1_777_593_600)
    expect(parseIsoTimestamp('2026-05-01T02:00:00+02:00')).toBe(1_777_593_600)
    expect(parseIsoTimestamp('2026-05-01T00:00:00.999Z')).toBe(1_777_593_600)
    expect(() => parseIsoTimestamp('2026-05-01T00:00:00')).toThrow(InvalidInputError)
    expect(() => parseIsoTimestamp('yesterday')).toThrow(InvalidInputError)
  })
})
