import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { addDaysToDate } from './dates.ts'
import { InvalidInputError } from './errors.ts'
import { calendarDays, calendarPeriod, GRANULARITIES, type Granularity } from './periods.ts'

describe('calendarPeriod', () => {
  test('behavior: months, quarters and years in UTC, leap years included', () => {
    expect(calendarPeriod('2026-05-17', 'day')).toEqual({
      period: '2026-05-17',
      first: '2026-05-17',
      last: '2026-05-17',
    })
    expect(calendarPeriod('2024-02-10', 'month')).toEqual({
      period: '2024-02',
      first: '2024-02-01',
      last: '2024-02-29',
    })
    expect(calendarPeriod('2026-12-31', 'month')).toEqual({
      period: '2026-12',
      first: '2026-12-01',
      last: '2026-12-31',
    })
    expect(calendarPeriod('2026-05-17', 'quarter')).toEqual({
      period: '2026-Q2',
      first: '2026-04-01',
      last: '2026-06-30',
    })
    expect(calendarPeriod('2026-11-02', 'quarter')).toEqual({
      period: '2026-Q4',
      first: '2026-10-01',
      last: '2026-12-31',
    })
    expect(calendarPeriod('2026-01-01', 'year')).toEqual({
      period: '2026',
      first: '2026-01-01',
      last: '2026-12-31',
    })
    expect(calendarDays('2026-04-01', '2026-06-30')).toBe(91)
  })

  test('behavior: an unknown granularity is refused', () => {
    expect(() => calendarPeriod('2026-01-01', 'week' as Granularity)).toThrow(InvalidInputError)
  })

  test.prop([fc.nat({ max: 20_000 }), fc.constantFrom(...GRANULARITIES)], { numRuns: runs(200) })(
    'property: a date lies in its period, and the periods tile the calendar',
    (offset, by) => {
      const date = addDaysToDate('1990-01-01', offset)
      const p = calendarPeriod(date, by)
      expect(p.first <= date && date <= p.last).toBe(true)
      expect(calendarPeriod(p.first, by)).toEqual(p)
      expect(calendarPeriod(p.last, by)).toEqual(p)
      expect(calendarPeriod(addDaysToDate(p.last, 1), by).first).toBe(addDaysToDate(p.last, 1))
    },
  )
})
