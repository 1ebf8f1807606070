import { hash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../db/repos/index.ts'
import type { ReportDay, WalletRecordRow } from '../db/repos/reports.ts'
import {
  addDaysToDate,
  EngineError,
  InvalidInputError,
  parseDateOnly,
  parseIsoInstantMs,
  ReportRangeError,
} from '../engine/index.ts'
import { impersonatedOrg } from './auth/impersonation.ts'
import { caller } from './auth/plugin.ts'
import { ApiError } from './errors.ts'
import { currencyOf } from './fiat-view.ts'
import { type ReportReads, reportReads, reportReadsAsOf } from './report-cache.ts'

/**
 * What every reporting route shares: dates and the report answering for them (404 when none), the report
 * headers and ETags, the reading organization (Impersonate-Org) and CSV. How a record is shown is
 * api/wallet-presentation.ts.
 */

/** At most this many lots, accounts or addresses per reporting POST (README "Limits"). */
export const MAX_REPORT_ITEMS = 1000
/** A summary covers at most this many days (from and to included). */
export const MAX_SUMMARY_DAYS = 366
/** A summary without `from` covers this many days ending at `to`. */
export const DEFAULT_SUMMARY_DAYS = 30

/** Calendar dates already found valid (bounded: a date is 10 characters, a few thousand are ever asked). */
const validDates = new Set<string>()

/** Validates a YYYY-MM-DD calendar date (400 IR1000 naming the field). */
export function parseDate(value: string, field: string): string {
  if (validDates.has(value)) return value
  try {
    parseDateOnly(value, field)
  } catch (err) {
    if (err instanceof InvalidInputError) throw new ApiError('IR1000', `${field} must be a date YYYY-MM-DD`)
    throw err
  }
  if (validDates.size >= 10_000) validDates.clear()
  validDates.add(value)
  return value
}

/** Days from `from` to `to`, both included. */
export function daySpan(from: string, to: string): number {
  return (parseDateOnly(to) - parseDateOnly(from)) / 86_400 + 1
}

/** The `as_of` query parameter of every reporting read (README "For finance", restatements). */
export const AsOfQuery = {
  as_of: Type.Optional(
    Type.String({
      description:
        'RFC 3339 instant with a zone, not in the future: answer with the versions of the days visible then ' +
        '(the restatement log), byte for byte what was answered at that instant',
    }),
  ),
}

/** Per request: its reads (the app's, or as of its `as_of`). */
const readsOfRequest = new WeakMap<FastifyRequest, ReportReads>()

/**
 * The reporting reads of a request: the app's shared ones, or, with `?as_of=<RFC 3339 instant>`, the days as
 * they were visible then (`reportReadsAsOf`). A malformed or future `as_of`: 400 IR1000.
 */
export function readsFor(request: FastifyRequest, repos: Repos): ReportReads {
  const held = readsOfRequest.get(request)
  if (held) return held
  const query = request.query as Record<string, unknown> | undefined
  const value = query?.as_of
  let reads: ReportReads
  if (value === undefined) reads = reportReads(repos)
  else {
    const asOf = parseInstant(value, 'as_of')
    if (asOf.getTime() > Date.now()) {
      throw new ApiError('IR1000', `as_of (${value}) is in the future: give an instant up to now`)
    }
    reads = reportReadsAsOf(repos, asOf)
  }
  readsOfRequest.set(request, reads)
  return reads
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
 * The dates of a summary: `to` defaults to the latest computed date, `from` to 29 days before `to`.
 * from > to, or more than 366 days: 400 IR4001 (nothing computed yet and no `to`: 404 IR4000).
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
  const from = fromGiven ?? addDaysToDate(to, -(DEFAULT_SUMMARY_DAYS - 1))
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

/** An answer's data_as_of: when the newest of its days' versions became visible (RFC 3339, ms). */
export function dataAsOfDays(days: readonly Pick<ReportDay, 'data_as_of'>[]): string {
  let asOf = (days[0] as Pick<ReportDay, 'data_as_of'>).data_as_of
  for (const day of days) if (day.data_as_of > asOf) asOf = day.data_as_of
  return asOf.toISOString()
}

/** The days of an answer as the report headers need them. */
type HeaderDay = Pick<ReportDay, 'report_epoch' | 'date' | 'visible_version' | 'data_as_of'>

/**
 * Sets the report headers of an answer over `days` (one day, or a range's days in order): `X-Report-Epoch`,
 * `X-Report-Date` and `X-Report-Version` name the last day's report and its version; `X-Report-Data-As-Of`
 * is when the newest of the days' versions became visible (the answer's `data_as_of`: a read `as_of` that
 * instant or later, until the next restatement, answers the same bytes). Returns that instant.
 */
export function setReportHeaders(reply: FastifyReply, days: HeaderDay | readonly HeaderDay[]): string {
  const list: readonly HeaderDay[] = Array.isArray(days) ? days : [days as HeaderDay]
  const last = list[list.length - 1] as HeaderDay
  const dataAsOf = dataAsOfDays(list)
  reply.header('x-report-epoch', last.report_epoch)
  reply.header('x-report-date', last.date)
  reply.header('x-report-version', String(last.visible_version))
  reply.header('x-report-data-as-of', dataAsOf)
  return dataAsOf
}

/**
 * ETag of a response built from computed days: the days' (epoch, visible version, content hash) and the
 * request's normalized inputs. Set only when every day is `computed` (a day being recomputed answers with
 * `Cache-Control: no-cache` and no ETag). Returns true once the request is answered: 304 when If-None-Match
 * matches, else, on a route made with KEPT_ANSWERS, the bytes of an identical earlier answer
 * (`reportAnswers`). Returns false when the handler must build the answer.
 */
export function answeredFromCache(
  request: FastifyRequest,
  reply: FastifyReply,
  days: readonly Pick<ReportDay, 'report_epoch' | 'visible_version' | 'content_hash' | 'status'>[],
  inputs: unknown,
): boolean {
  if (days.length === 0 || days.some((d) => d.status !== 'computed')) {
    reply.header('cache-control', 'no-cache')
    return false
  }
  // Fastify builds a new routeOptions object at each read: read it once
  const route = request.routeOptions
  // the currency asked for changes the answer (fiat values), as the inputs do
  let text = `${request.method} ${route.url}\n${JSON.stringify(inputs)}\n${currencyOf(request) ?? ''}\n`
  for (const d of days) text += `${d.report_epoch}:${d.visible_version}:${d.content_hash ?? ''}\n`
  const etag = etagOf(text)
  reply.header('etag', etag)
  reply.header('cache-control', 'private, no-cache')
  const match = request.headers['if-none-match']
  if (match !== undefined) {
    const tags = match.split(',').map((t) => t.trim().replace(/^W\//, ''))
    if (tags.includes(etag) || tags.includes('*')) {
      reply.code(304).send()
      return true
    }
  }
  // a route without the keepAnswer hook never fills the memo: nothing to look up
  if (route.config.keepsAnswers !== true) return false
  const kept = request.server.reportAnswers.get(etag)
  if (kept) {
    reply.type(kept.contentType)
    if (kept.contentDisposition !== undefined) reply.header('content-disposition', kept.contentDisposition)
    reply.send(kept.body)
    return true
  }
  // on the reply itself: no table keyed by short-lived replies to grow until the next full GC
  reply.answerEtag = etag
  return false
}

/**
 * Route onSend hook of the reporting reads: keeps a 200 answer's bytes under its ETag in the app's
 * `reportAnswers`, so the next identical request is answered from them (`answeredFromCache`).
 */
function keepAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: Error | null, payload: unknown) => void,
): void {
  const etag = reply.answerEtag
  if (
    etag !== undefined &&
    reply.statusCode === 200 &&
    (typeof payload === 'string' || Buffer.isBuffer(payload))
  ) {
    const disposition = reply.getHeader('content-disposition')
    request.server.reportAnswers.set(etag, {
      body: payload,
      contentType: String(reply.getHeader('content-type')),
      contentDisposition: disposition === undefined ? undefined : String(disposition),
    })
  }
  done(null, payload)
}

/**
 * Route options of a reporting read whose answers are kept under their ETag (api/answer-memo.ts): the
 * `keepAnswer` hook that fills the memo and the flag by which `answeredFromCache` looks in it, always together.
 */
export const KEPT_ANSWERS = { onSend: keepAnswer, config: { keepsAnswers: true } }

/** ETags of short identities already hashed (a client polling one read asks the same one again). */
const etags = new Map<string, string>()
const ETAG_MEMO_MAX_TEXT = 512

/** The ETag of a response's identity: the first 32 characters of its sha256, base64url, quoted. */
function etagOf(text: string): string {
  let etag = etags.get(text)
  if (etag !== undefined) return etag
  etag = `"${hash('sha256', text, 'base64url').slice(0, 32)}"`
  if (text.length <= ETAG_MEMO_MAX_TEXT) {
    if (etags.size >= 10_000) etags.clear()
    etags.set(text, etag)
  }
  return etag
}

/**
 * The organization a reporting read is made for: the token's, or the one named by `Impersonate-Org`
 * (only with the `impersonate:org` scope: else 403 IR2003; only toward an organization that named the
 * token's a delegate, or from an operator organization: else 403 IR2008, an unknown organization alike;
 * audited: see api/auth/impersonation.ts). Without the header the answer is at hand (no promise).
 */
export function readingOrg(request: FastifyRequest, repos: Repos): string | Promise<string> {
  const auth = caller(request)
  const header = request.headers['impersonate-org']
  if (header === undefined) return auth.orgId
  return impersonatedOrg(request, auth, header, repos)
}

/** The v1 reward endpoints take no `unit` (query or body): 400 IR1000. */
export function rejectUnit(request: FastifyRequest): void {
  const query = request.query as Record<string, unknown> | undefined
  const body = request.body as Record<string, unknown> | undefined
  const inBody = body !== null && typeof body === 'object' && !Array.isArray(body) && 'unit' in body
  if ((query && 'unit' in query) || inBody) {
    throw new ApiError(
      'IR1000',
      'unit is not accepted by the v1 reward endpoints: amounts are in the unit their field name ends with',
    )
  }
}

/** Maps an engine error raised by on-the-fly math (lots) to the catalog; anything else is rethrown. */
export function engineErrorToApi(err: unknown): never {
  if (err instanceof ReportRangeError) throw new ApiError('IR4001', err.message, { cause: err })
  if (err instanceof EngineError) throw new ApiError('IR1000', err.message, { cause: err })
  throw err
}

/** True when the client asks for CSV (`Accept: text/csv`). */
export function wantsCsv(request: FastifyRequest): boolean {
  const accept = request.headers.accept
  return typeof accept === 'string' && /(^|,)\s*text\/csv\b/i.test(accept)
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** RFC 4180 CSV: a header row with the field names, then one row per record (null: empty cell). */
export function toCsv(fields: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const lines = [fields.map(csvCell).join(',')]
  for (const row of rows) lines.push(fields.map((f) => csvCell(row[f])).join(','))
  return `${lines.join('\r\n')}\r\n`
}

/** Sends rows as a CSV attachment. */
export function sendCsv(
  reply: FastifyReply,
  name: string,
  fields: readonly string[],
  rows: readonly Record<string, unknown>[],
) {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name}.csv"`)
    .send(toCsv(fields, rows))
}

/** A JSON response whose 200 may also be CSV (documented in OpenAPI). */
export function jsonOrCsv<T>(schema: T) {
  return {
    description: 'JSON, or CSV (one row per wallet-day, a header row) with Accept: text/csv',
    content: {
      'application/json': { schema },
      'text/csv': { schema: Type.String() },
    },
  }
}
