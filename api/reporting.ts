import { hash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../db/repos/index.ts'
import type { AccountRecordRow, ReportDay, WalletRecordRow } from '../db/repos/reports.ts'
import {
  addDaysToDate,
  EngineError,
  formatUnits18,
  InvalidInputError,
  parseDateOnly,
  ReportRangeError,
  underlyingFromShares,
  V0_WALLET_RECORD_FIELDS,
  V1_WALLET_RECORD_FIELDS,
  WALLET_AMOUNT_FIELDS,
  type WalletAmounts,
  type WalletRecord,
} from '../engine/index.ts'
import { impersonatedOrg } from './auth/impersonation.ts'
import { caller } from './auth/plugin.ts'
import { ApiError } from './errors.ts'
import { reportReads } from './report-cache.ts'
import { Nullable } from './schemas.ts'

/**
 * What every reporting route shares: dates and the report answering for them (404 when none), the report
 * headers and ETags, the reading organization (Impersonate-Org), stored rows -> engine records, the
 * presentation rules for wallets of other organizations, units and CSV.
 */

/** At most this many lots, accounts or addresses per reporting POST (README "Limits"). */
export const MAX_REPORT_ITEMS = 1000
/** A summary covers at most this many days (from and to included). */
export const MAX_SUMMARY_DAYS = 366
/** A summary without `from` covers this many days ending at `to`. */
export const DEFAULT_SUMMARY_DAYS = 30

export type RecordVersion = 'v0' | 'v1'
export type Unit = 'lseth' | 'eth'

/** The fields of a wallet record of the version, in the interface's order. */
export function walletFields(version: RecordVersion): readonly string[] {
  return version === 'v1' ? V1_WALLET_RECORD_FIELDS : V0_WALLET_RECORD_FIELDS
}

/** The amount fields an account's `totals` carries in the version (balance_lseth and rewards_eth first). */
export function totalsFields(version: RecordVersion): readonly string[] {
  const fields = walletFields(version)
  return WALLET_AMOUNT_FIELDS.filter((f) => fields.includes(f))
}

const NullableString = Nullable('string')

/** Response schema of a wallet reward record of the version (every field a string; ids nullable). */
export function walletRecordSchema(version: RecordVersion) {
  return Type.Object(
    Object.fromEntries(
      walletFields(version).map((f) => [
        f,
        f === 'account_id' || f === 'org_id' ? NullableString : Type.String(),
      ]),
    ),
  )
}

/** Response schema of an account's totals of the version. */
export function totalsSchema(version: RecordVersion) {
  return Type.Object(Object.fromEntries(totalsFields(version).map((f) => [f, Type.String()])))
}

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

/** An explanation of why a date (or range) has no computed report. */
export async function noReport(repos: Repos, what: string): Promise<ApiError> {
  const bounds = await reportReads(repos).bounds()
  const known = bounds
    ? `reports are computed from ${bounds.first.date} to ${bounds.latest.date}`
    : 'no report has been computed yet'
  return new ApiError('IR4000', `no computed report for ${what}: ${known}`)
}

/** The report answering for `date` (YYYY-MM-DD, already validated), or 404 IR4000. */
export async function reportOr404(repos: Repos, date: string): Promise<ReportDay> {
  const day = await reportReads(repos).day(date)
  if (!day) throw await noReport(repos, date)
  return day
}

/**
 * The dates of a summary: `to` defaults to the latest computed date, `from` to 29 days before `to`.
 * from > to, or more than 366 days: 400 IR4001 (nothing computed yet and no `to`: 404 IR4000).
 */
export async function summaryDates(
  repos: Repos,
  query: { from?: string | undefined; to?: string | undefined },
): Promise<{ from: string; to: string }> {
  let to = query.to === undefined ? undefined : parseDate(query.to, 'to')
  const fromGiven = query.from === undefined ? undefined : parseDate(query.from, 'from')
  if (to === undefined) {
    const bounds = await reportReads(repos).bounds()
    if (!bounds) throw await noReport(repos, 'any date')
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
  repos: Repos,
  query: { from?: string | undefined; to?: string | undefined },
): Promise<{ from: string; to: string; days: ReportDay[] }> {
  const { from, to } = await summaryDates(repos, query)
  const days = await reportReads(repos).between(from, to)
  if (days.length === 0) throw await noReport(repos, `${from} to ${to}`)
  return { from, to, days }
}

/**
 * The reports of a date range (404 IR4000 when none) and the records of `addresses` on them, by date and
 * address: from memory for computed days (`reportReads`), else in one round trip.
 */
export async function walletRecordsOr404(
  repos: Repos,
  from: string,
  to: string,
  addresses: readonly string[],
): Promise<{ days: ReportDay[]; rows: WalletRecordRow[] }> {
  const reads = reportReads(repos)
  const days = from === to ? [await reads.day(from)].flatMap((d) => d ?? []) : await reads.between(from, to)
  const read = days.length === 0 ? { days, rows: [] } : await reads.walletRows(days, addresses)
  if (read.days.length === 0) throw await noReport(repos, from === to ? from : `${from} to ${to}`)
  return read
}

/** Sets `X-Report-Epoch` / `X-Report-Date`: the report a response reflects (the latest one for ranges). */
export function setReportHeaders(reply: FastifyReply, day: Pick<ReportDay, 'report_epoch' | 'date'>): void {
  reply.header('x-report-epoch', day.report_epoch)
  reply.header('x-report-date', day.date)
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
  let text = `${request.method} ${route.url}\n${JSON.stringify(inputs)}\n`
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

/** A stored wallet record as the engine's record (amounts as bigint). */
export function walletRecordOf(row: WalletRecordRow): WalletRecord {
  const record: Record<string, unknown> = { ...row, oracle_report: row.report_epoch }
  for (const field of WALLET_AMOUNT_FIELDS) record[field] = BigInt(row[field])
  return record as unknown as WalletRecord
}

/**
 * `formatUnits18(BigInt(value))` of a stored amount (a decimal integer string as Postgres prints numeric),
 * by moving the decimal point: no bigint, no division. Anything unusual takes the exact path.
 *
 * @example
 * formatStoredUnits18('1500000000000000000') // '1.5'
 * formatStoredUnits18('-1') // '-0.000000000000000001'
 */
export function formatStoredUnits18(value: string): string {
  const negative = value.charCodeAt(0) === 45 // '-'
  const start = negative ? 1 : 0
  const length = value.length - start
  // digits only, no leading zero (as Postgres prints numeric); else the exact path
  let plain = length > 0 && (length === 1 || value.charCodeAt(start) !== 48)
  for (let i = start; plain && i < value.length; i++) {
    const c = value.charCodeAt(i)
    plain = c >= 48 && c <= 57
  }
  if (!plain) return formatUnits18(BigInt(value))
  // the fraction: the last 18 digits without trailing zeros
  let end = value.length
  const fractionStart = Math.max(start, value.length - 18)
  while (end > fractionStart && value.charCodeAt(end - 1) === 48) end--
  const integer = length > 18 ? value.slice(start, value.length - 18) : '0'
  if (end === fractionStart) return integer === '0' ? '0' : negative ? `-${integer}` : integer
  const fraction = value.slice(fractionStart, end).padStart(end - value.length + 18, '0')
  return `${negative ? '-' : ''}${integer}.${fraction}`
}

const AMOUNT_FIELDS: ReadonlySet<string> = new Set(WALLET_AMOUNT_FIELDS)
/** What asSeenBy hides from another organization, and what it shows instead. */
const HIDDEN_FROM_OTHERS: Record<string, (row: WalletRecordRow) => string | null> = {
  account_id: () => null,
  org_id: () => null,
  target_fee_rate: () => null,
  discount_rate: () => '0',
  rebate_eth: () => '0',
  rebate_lseth: () => '0',
  total_rebate_eth: () => '0',
  total_rebate_lseth: () => '0',
  platform_fees_at_discount_rate_eth: (row) => formatStoredUnits18(row.platform_fees_eth),
  total_platform_fees_at_discount_rate_eth: (row) => formatStoredUnits18(row.total_platform_fees_eth),
}

/**
 * A stored wallet record presented for the reading organization in a version, amounts in the stored unit
 * (LsETH for `*_lseth`): exactly `presentWalletRecord(asSeenBy(walletRecordOf(row), orgId), version)`
 * (a property test holds them equal), straight from the stored strings. The hot path of the wallet reads.
 */
export function presentStoredWallet(
  row: WalletRecordRow,
  orgId: string,
  version: RecordVersion,
): Record<string, string | null> {
  // rows of computed days are shared (api/report-cache.ts): their presentations are kept beside them
  const own = row.org_id === orgId
  const key = JSON_KEYS[version][own ? 'own' : 'other'][0]
  let presented = presentations.get(row)
  const hit = presented?.get(key)
  if (hit) return hit
  const out = presentRow(row, own, version)
  if (!presented) {
    presented = new Map()
    presentations.set(row, presented)
  }
  presented.set(key, out)
  return out
}

/**
 * Sends stored wallet records presented for the reading org as a JSON array: each record's JSON is made
 * once per (row, version, view) and kept beside the shared row, so a read of computed days serializes
 * nothing. The bytes equal the route's response-schema serialization (the presented object has the
 * schema's fields in its order, every value a string or null).
 */
export function sendStoredWallets(
  reply: FastifyReply,
  rows: readonly WalletRecordRow[],
  orgId: string,
  version: RecordVersion,
) {
  // one record (the single-address read): its one-element array is kept beside the row as well
  if (rows.length === 1) {
    return reply
      .type('application/json; charset=utf-8')
      .send(storedWalletJson(rows[0] as WalletRecordRow, orgId, version, true))
  }
  const parts: Buffer[] = [OPEN_BRACKET]
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) parts.push(COMMA)
    parts.push(storedWalletJson(rows[i] as WalletRecordRow, orgId, version, false))
  }
  parts.push(CLOSE_BRACKET)
  return reply.type('application/json; charset=utf-8').send(Buffer.concat(parts))
}
const OPEN_BRACKET = Buffer.from('[')
const COMMA = Buffer.from(',')
const CLOSE_BRACKET = Buffer.from(']')

/** The keys of a row's kept JSON: by version, view (own organization or not) and form (alone in an array). */
const JSON_KEYS = {
  v0: { own: ['v0:own', 'v0:own[]'], other: ['v0', 'v0[]'] },
  v1: { own: ['v1:own', 'v1:own[]'], other: ['v1', 'v1[]'] },
} as const

/**
 * `JSON.stringify(presentStoredWallet(row, orgId, version))` as UTF-8 (`alone`: inside `[` `]`), kept beside
 * the row.
 */
function storedWalletJson(
  row: WalletRecordRow,
  orgId: string,
  version: RecordVersion,
  alone: boolean,
): Buffer {
  const key = JSON_KEYS[version][row.org_id === orgId ? 'own' : 'other'][alone ? 1 : 0]
  let json = walletJson.get(row)
  const hit = json?.get(key)
  if (hit) return hit
  // the one-element array wraps the record's own kept bytes: one serialization per (row, version, view)
  const out = alone
    ? Buffer.concat([OPEN_BRACKET, storedWalletJson(row, orgId, version, false), CLOSE_BRACKET])
    : Buffer.from(JSON.stringify(presentStoredWallet(row, orgId, version)))
  if (!json) {
    json = new Map()
    walletJson.set(row, json)
  }
  json.set(key, out)
  return out
}
const walletJson = new WeakMap<WalletRecordRow, Map<string, Buffer>>()

/** Presentations of stored rows by version and view (own organization or not); callers never mutate them. */
const presentations = new WeakMap<WalletRecordRow, Map<string, Readonly<Record<string, string | null>>>>()

function presentRow(
  row: WalletRecordRow,
  own: boolean,
  version: RecordVersion,
): Record<string, string | null> {
  const out: Record<string, string | null> = {}
  for (const field of walletFields(version)) {
    const hidden = own ? undefined : HIDDEN_FROM_OTHERS[field]
    if (hidden) out[field] = hidden(row)
    else if (field === 'oracle_report') out[field] = row.report_epoch
    else if (AMOUNT_FIELDS.has(field))
      out[field] = formatStoredUnits18(row[field as keyof WalletRecordRow] as string)
    else out[field] = row[field as keyof WalletRecordRow] as string | null
  }
  return out
}

/** A stored account record's amounts (bigint). */
export function accountAmountsOf(row: AccountRecordRow): WalletAmounts {
  const out = {} as WalletAmounts
  for (const field of WALLET_AMOUNT_FIELDS) out[field] = BigInt(row[field])
  return out
}

/**
 * What a platform sees of a holder's record that is not attributed to it (another organization's wallet,
 * or no organization's): the protocol-wide facts, without who holds it or their commercial terms.
 * account_id and org_id are null; the discount (discount_rate, rebates) is not shown: discount_rate '0',
 * rebates 0 and platform_fees_at_discount_rate = platform_fees. Another organization's wallet therefore reads
 * exactly like a holder registered nowhere with platform fees. Records of the reading organization's own
 * wallets are shown whole.
 */
export function asSeenBy(record: WalletRecord, orgId: string): WalletRecord {
  if (record.org_id === orgId) return record
  return {
    ...record,
    account_id: null,
    org_id: null,
    target_fee_rate: null,
    discount_rate: '0',
    rebate_eth: 0n,
    rebate_lseth: 0n,
    total_rebate_eth: 0n,
    total_rebate_lseth: 0n,
    platform_fees_at_discount_rate_eth: record.platform_fees_eth,
    total_platform_fees_at_discount_rate_eth: record.total_platform_fees_eth,
  }
}

/** The LsETH-denominated amount fields (`*_lseth`). */
const LSETH_FIELDS = WALLET_AMOUNT_FIELDS.filter((f) => f.endsWith('_lseth'))

/**
 * v0 `unit=eth`: every LsETH amount (`*_lseth`) is given as its ETH value at the report's rate,
 * floor(shares x U / S) (River's underlyingBalanceFromShares), field names unchanged. `lseth`: as stored.
 */
export function inUnit<T extends Pick<WalletRecord, (typeof LSETH_FIELDS)[number]>>(
  amounts: T,
  unit: Unit,
  day: Pick<ReportDay, 'total_underlying_eth' | 'total_lseth_supply'>,
): T {
  if (unit === 'lseth') return amounts
  const underlying = BigInt(day.total_underlying_eth)
  const supply = BigInt(day.total_lseth_supply)
  const out = { ...amounts }
  for (const field of LSETH_FIELDS) out[field] = underlyingFromShares(amounts[field], underlying, supply)
  return out
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
