import { LRUCache } from 'lru-cache'
import type { ReportDay, WalletRecordRow } from '../../db/repos/reports.ts'
import {
  InvalidInputError,
  parseDateOnly,
  parseIsoInstantMs,
  SECONDS_PER_DAY,
  utcDateOf,
} from '../../engine/index.ts'
import { ApiError } from '../errors.ts'
import type { ReportReads } from '../report-cache.ts'

/**
 * The dates of the reporting reads: a date or instant of a request checked (400 IR1000), the report answering
 * for a date or a range (404 IR4000 when none) and the range of a summary (400 IR4001).
 */

/** A summary covers at most this many days (from and to included). */
export const MAX_SUMMARY_DAYS = 366
/** A summary without `from` covers this many days ending at `to`. */
export const DEFAULT_SUMMARY_DAYS = 30

/** Calendar dates already found valid (a date is 10 characters, a few thousand are ever asked). */
const validDates = new LRUCache<string, true>({ max: 10_000 })

/** Validates a YYYY-MM-DD calendar date (400 IR1000 naming the field). */
export function parseDate(value: string, field: string): string {
  if (validDates.has(value)) return value
  try {
    parseDateOnly(value, field)
  } catch (err) {
    if (err instanceof InvalidInputError) throw new ApiError('IR1000', `${field} must be a date YYYY-MM-DD`)
    throw err
  }
  validDates.set(value, true)
  return value
}

/** Days from `from` to `to`, both included. */
export function daySpan(from: string, to: string): number {
  return (parseDateOnly(to) - parseDateOnly(from)) / SECONDS_PER_DAY + 1
}

/** Parses an RFC 3339 instant with a zone, to the millisecond (400 IR1000 naming the field). */
export function parseInstant(value: unknown, field: string): Date {
  if (typeof value === 'string') {
    try {
      return new Date(parseIsoInstantMs(value, field))
    } catch (err) {
      if (!(err instanceof InvalidInputError)) throw err
    }
  }
  throw new ApiError(
    'IR1000',
    `${field} must be an RFC 3339 timestamp with a zone (e.g. 2026-05-03T12:00:00Z)`,
  )
}

/** An explanation of why a date (or range) has no computed report. */
export async function noReport(reads: ReportReads, what: string): Promise<ApiError> {
  const bounds = await reads.bounds()
  const known = bounds
    ? `reports are computed from ${bounds.first.date} to ${bounds.latest.date}`
    : 'no report has been computed yet'
  return new ApiError('IR4000', `no computed report for ${what}: ${known}`)
}

/** The report answering for `date` (YYYY-MM-DD, already validated), or 404 IR4000. */
export async function reportOr404(reads: ReportReads, date: string): Promise<ReportDay> {
  const day = await reads.day(date)
  if (!day) throw await noReport(reads, date)
  return day
}

/**
 * A summary's `from` when none is given: 29 days before `to`, clamped to the first date a request may name
 * (1970-01-01, `DATE_YEARS`): `to=1970-01-01` covers that one day (docs/decisions.md "Dates before the epoch").
 */
function defaultFrom(to: string): string {
  const seconds = parseDateOnly(to, 'to') - (DEFAULT_SUMMARY_DAYS - 1) * SECONDS_PER_DAY
  return utcDateOf(Math.max(0, seconds))
}

/**
 * The dates of a summary: `to` defaults to the latest computed date, `from` to 29 days before `to` (never
 * before 1970-01-01). from > to, or more than 366 days: 400 IR4001 (nothing computed yet and no `to`: 404
 * IR4000).
 */
export async function summaryDates(
  reads: ReportReads,
  query: { from?: string | undefined; to?: string | undefined },
): Promise<{ from: string; to: string }> {
  let to = query.to === undefined ? undefined : parseDate(query.to, 'to')
  const fromGiven = query.from === undefined ? undefined : parseDate(query.from, 'from')
  if (to === undefined) {
    const bounds = await reads.bounds()
    if (!bounds) throw await noReport(reads, 'any date')
    to = bounds.latest.date
  }
  const from = fromGiven ?? defaultFrom(to)
  if (from > to) throw new ApiError('IR4001', `from (${from}) is after to (${to})`)
  if (daySpan(from, to) > MAX_SUMMARY_DAYS) {
    throw new ApiError(
      'IR4001',
      `a summary covers at most ${MAX_SUMMARY_DAYS} days (${from} to ${to} is longer)`,
    )
  }
  return { from, to }
}

/** The dates of a summary (`summaryDates`) and their reports (404 IR4000 when none). */
export async function summaryRange(
  reads: ReportReads,
  query: { from?: string | undefined; to?: string | undefined },
): Promise<{ from: string; to: string; days: ReportDay[] }> {
  const { from, to } = await summaryDates(reads, query)
  const days = await reads.between(from, to)
  if (days.length === 0) throw await noReport(reads, `${from} to ${to}`)
  return { from, to, days }
}

/**
 * The reports of a date range (404 IR4000 when none) and the records of `addresses` on them, by date and
 * address: from memory for computed days (`reportReads`), else in one round trip.
 */
export async function walletRecordsOr404(
  reads: ReportReads,
  from: string,
  to: string,
  addresses: readonly string[],
): Promise<{ days: ReportDay[]; rows: WalletRecordRow[] }> {
  const days = from === to ? [await reads.day(from)].flatMap((d) => d ?? []) : await reads.between(from, to)
  const read = days.length === 0 ? { days, rows: [] } : await reads.walletRows(days, addresses)
  if (read.days.length === 0) throw await noReport(reads, from === to ? from : `${from} to ${to}`)
  return read
}
