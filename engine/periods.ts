import { addDaysToDate, parseDateOnly, SECONDS_PER_DAY } from './dates.ts'
import { InvalidInputError } from './errors.ts'

/**
 * UTC calendar periods of the rollups (`group_by=day|month|quarter|year`): the key of a date's period
 * (`2026-04-30`, `2026-04`, `2026-Q2`, `2026`) and its first and last dates.
 */

/** A rollup granularity. */
export type Granularity = 'day' | 'month' | 'quarter' | 'year'

/** The granularities, finest first. */
export const GRANULARITIES: readonly Granularity[] = ['day', 'month', 'quarter', 'year']

/** A calendar period: its key and its first and last dates (UTC, both included). */
export interface CalendarPeriod {
  period: string
  first: string
  last: string
}

/** `YYYY-MM-01` of a year and a month 1..12 (12 + 1 rolls to January of the next year). */
function monthStart(year: number, month: number): string {
  const y = month > 12 ? year + 1 : year
  const m = month > 12 ? month - 12 : month
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-01`
}

/**
 * The UTC calendar period of `date` (YYYY-MM-DD) at a granularity.
 *
 * @example
 * calendarPeriod('2026-05-17', 'quarter') // { period: '2026-Q2', first: '2026-04-01', last: '2026-06-30' }
 * calendarPeriod('2026-02-03', 'month') // { period: '2026-02', first: '2026-02-01', last: '2026-02-28' }
 */
export function calendarPeriod(date: string, granularity: Granularity): CalendarPeriod {
  parseDateOnly(date)
  const year = Number(date.slice(0, 4))
  const month = Number(date.slice(5, 7))
  const yyyy = date.slice(0, 4)
  if (granularity === 'day') return { period: date, first: date, last: date }
  if (granularity === 'month') {
    return {
      period: date.slice(0, 7),
      first: monthStart(year, month),
      last: lastBefore(monthStart(year, month + 1)),
    }
  }
  if (granularity === 'quarter') {
    const q = Math.ceil(month / 3)
    const first = monthStart(year, 3 * q - 2)
    return { period: `${yyyy}-Q${q}`, first, last: lastBefore(monthStart(year, 3 * q + 1)) }
  }
  if (granularity === 'year') return { period: yyyy, first: `${yyyy}-01-01`, last: `${yyyy}-12-31` }
  throw new InvalidInputError('group_by must be day, month, quarter or year', { details: { granularity } })
}

/** The day before a date (the last day of the period that ends before it). */
function lastBefore(date: string): string {
  return addDaysToDate(date, -1)
}

/**
 * The number of calendar days from `first` to `last`, both included.
 *
 * @example
 * calendarDays('2026-04-01', '2026-06-30') // 91
 */
export function calendarDays(first: string, last: string): number {
  return (parseDateOnly(last) - parseDateOnly(first)) / SECONDS_PER_DAY + 1
}
