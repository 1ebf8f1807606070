import { addSeconds, fromUnixTime, getUnixTime, isValid, parseISO } from 'date-fns'
import { InvalidInputError } from './errors.ts'

/**
 * UTC date helpers over unix seconds. The engine never reads the clock: every instant is a parameter.
 * All dates are UTC calendar dates `YYYY-MM-DD` (never the machine's time zone).
 *
 * The calendar is date-fns's, through its functions that are exact in UTC whatever the process's TZ:
 * `parseISO` of a string with an explicit `Z` or offset (it checks the day exists in its month),
 * `getUnixTime`/`fromUnixTime` and `addSeconds`. Its local-time functions are not used: `addDays`,
 * `format`, `formatISO`, `isExists` and `differenceInCalendarDays` read and write the machine's local calendar
 * (in America/St_Johns `addDays` of 2026-03-07 by 2 lands an hour short of 2026-03-09 UTC; Pacific/Kiritimati
 * has no 1994-12-31). A UTC date is therefore formatted by `Date#toISOString` (always UTC).
 */

/** Seconds in a day (every UTC day: unix time has no leap seconds, UTC no daylight saving). */
export const SECONDS_PER_DAY = 86_400

const DATE_ONLY = /^(\d{4})-\d{2}-\d{2}$/
/** RFC 3339 with a zone: date and time, the fraction of a second, the zone (`Z` or `±hh:mm`, hh < 24). */
const ISO_INSTANT = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/

function assertTimestamp(timestamp: number, field: string): void {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new InvalidInputError(`${field} must be a non-negative integer of unix seconds`, {
      details: { field, value: timestamp },
    })
  }
}

/** The `YYYY-MM-DD` of an instant, in UTC. */
function utcDateOfInstant(instant: Date): string {
  return instant.toISOString().slice(0, 10)
}

/**
 * The UTC calendar date of a unix timestamp (seconds).
 *
 * @example
 * utcDateOf(1777593600) // '2026-05-01'
 */
export function utcDateOf(timestamp: number, field = 'timestamp'): string {
  assertTimestamp(timestamp, field)
  return utcDateOfInstant(fromUnixTime(timestamp))
}

/**
 * The RFC 3339 UTC timestamp of unix seconds, without fractional seconds.
 *
 * @example
 * isoTimestampOf(1777593600) // '2026-05-01T00:00:00Z'
 */
export function isoTimestampOf(timestamp: number, field = 'timestamp'): string {
  assertTimestamp(timestamp, field)
  return fromUnixTime(timestamp).toISOString().replace('.000Z', 'Z')
}

/** The calendar years a date may name: from the Unix epoch (no chain data is older) to 9999. */
export const DATE_YEARS = { min: 1970, max: 9999 } as const

/**
 * Validates a `YYYY-MM-DD` calendar date from 1970-01-01 to 9999-12-31 and returns its UTC midnight in
 * unix seconds. Throws `InvalidInputError` (code INVALID_DATE) for anything else, including 2026-02-30 and
 * 0000-01-01 (the one date check of the project: the API, the CLI and the jobs all use it).
 *
 * @example
 * parseDateOnly('2026-05-01') // 1777593600
 */
export function parseDateOnly(date: string, field = 'date'): number {
  const match = DATE_ONLY.exec(date)
  if (match && Number(match[1]) >= DATE_YEARS.min) {
    // with its zone, parseISO is UTC midnight; a day its month does not have is an invalid date
    const midnight = parseISO(`${date}T00:00:00Z`)
    if (isValid(midnight)) return getUnixTime(midnight)
  }
  throw new InvalidInputError(`${field} must be a calendar date YYYY-MM-DD from ${DATE_YEARS.min}-01-01`, {
    code: 'INVALID_DATE',
    details: { field, value: date },
  })
}

/**
 * Parses an RFC 3339 timestamp with an explicit zone (`Z` or `+hh:mm`) into unix milliseconds (digits past
 * the millisecond are dropped: floor). A day its month does not have (2026-02-30) is refused.
 *
 * @example
 * parseIsoInstantMs('2026-05-01T00:00:00.25Z') // 1777593600250
 */
export function parseIsoInstantMs(value: string, field = 'timestamp'): number {
  const match = ISO_INSTANT.exec(value)
  // the whole seconds through parseISO (which checks the calendar); the fraction added as whole milliseconds:
  // parseISO reads it as a float (1970-01-01T00:00:01.005Z would be 1004 ms, .99999999999 a second more)
  const seconds = match ? parseISO(`${match[1]}${match[3]}`) : undefined
  if (!match || !seconds || !isValid(seconds)) {
    throw new InvalidInputError(`${field} must be an RFC 3339 timestamp with a zone`, {
      code: 'INVALID_DATE',
      details: { field, value },
    })
  }
  // rounding: floor to whole milliseconds (the first three digits of the fraction)
  return seconds.getTime() + Number((match[2] ?? '').slice(0, 3).padEnd(3, '0'))
}

/**
 * Parses an RFC 3339 timestamp with an explicit zone (`Z` or `+hh:mm`) into unix seconds (floor).
 *
 * @example
 * parseIsoTimestamp('2026-05-01T00:00:00Z') // 1777593600
 */
export function parseIsoTimestamp(value: string, field = 'timestamp'): number {
  // rounding: floor to whole seconds
  return Math.floor(parseIsoInstantMs(value, field) / 1000)
}

/**
 * Adds whole days to a `YYYY-MM-DD` date (UTC).
 *
 * @example
 * addDaysToDate('2026-04-30', 1) // '2026-05-01'
 */
export function addDaysToDate(date: string, days: number): string {
  // a UTC day is SECONDS_PER_DAY long: seconds, not date-fns's addDays (local calendar, see above)
  return utcDateOfInstant(addSeconds(fromUnixTime(parseDateOnly(date)), days * SECONDS_PER_DAY))
}
