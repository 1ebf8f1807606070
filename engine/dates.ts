import { InvalidInputError } from './errors.ts'

/**
 * UTC date helpers over unix seconds. The engine never reads the clock: every instant is a parameter.
 * All dates are UTC calendar dates `YYYY-MM-DD` (never the machine's time zone).
 */

/** Seconds in a day. */
export const SECONDS_PER_DAY = 86_400

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/

function assertTimestamp(timestamp: number, field: string): void {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new InvalidInputError(`${field} must be a non-negative integer of unix seconds`, {
      details: { field, value: timestamp },
    })
  }
}

/**
 * The UTC calendar date of a unix timestamp (seconds).
 *
 * @example
 * utcDateOf(1777593600) // '2026-05-01'
 */
export function utcDateOf(timestamp: number, field = 'timestamp'): string {
  assertTimestamp(timestamp, field)
  return new Date(timestamp * 1000).toISOString().slice(0, 10)
}

/**
 * The RFC 3339 UTC timestamp of unix seconds, without fractional seconds.
 *
 * @example
 * isoTimestampOf(1777593600) // '2026-05-01T00:00:00Z'
 */
export function isoTimestampOf(timestamp: number, field = 'timestamp'): string {
  assertTimestamp(timestamp, field)
  return new Date(timestamp * 1000).toISOString().replace('.000Z', 'Z')
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
    const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))
    if (!Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === date) return ms / 1000
  }
  throw new InvalidInputError(`${field} must be a calendar date YYYY-MM-DD from ${DATE_YEARS.min}-01-01`, {
    code: 'INVALID_DATE',
    details: { field, value: date },
  })
}

/**
 * Parses an RFC 3339 timestamp with an explicit zone (`Z` or `+hh:mm`) into unix milliseconds (digits past
 * the millisecond are dropped: floor).
 *
 * @example
 * parseIsoInstantMs('2026-05-01T00:00:00.25Z') // 1777593600250
 */
export function parseIsoInstantMs(value: string, field = 'timestamp'): number {
  const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)
  const ms = ok ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) {
    throw new InvalidInputError(`${field} must be an RFC 3339 timestamp with a zone`, {
      code: 'INVALID_DATE',
      details: { field, value },
    })
  }
  return ms
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
  return new Date((parseDateOnly(date) + days * SECONDS_PER_DAY) * 1000).toISOString().slice(0, 10)
}
