import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../db/repos/index.ts'
import type { AccountRecordRow, ReportDay, WalletRecordRow } from '../db/repos/reports.ts'
import {
  addDaysToDate,
  EngineError,
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
import { caller } from './auth/plugin.ts'
import { ApiError } from './errors.ts'

/**
 * What every reporting route shares: dates and the report answering for them (404 when none), the report
 * headers and ETags, the reading organization (Impersonate-Org), stored rows -> engine records, the
 * presentation rules for wallets of other organizations, units and CSV.
 */

/** At most this many lots, accounts or addresses per reporting POST (DESIGN.md §4.6). */
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

const NullableString = Type.Union([Type.String(), Type.Null()])

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

/** Validates a YYYY-MM-DD calendar date (400 IR1000 naming the field). */
export function parseDate(value: string, field: string): string {
  try {
    parseDateOnly(value, field)
  } catch (err) {
    if (err instanceof InvalidInputError) throw new ApiError('IR1000', `${field} must be a date YYYY-MM-DD`)
    throw err
  }
  return value
}

/** Days from `from` to `to`, both included. */
export function daySpan(from: string, to: string): number {
  return (parseDateOnly(to) - parseDateOnly(from)) / 86_400 + 1
}

/** An explanation of why a date (or range) has no computed report. */
async function noReport(repos: Repos, what: string): Promise<ApiError> {
  const bounds = await repos.reports.bounds()
  const known = bounds
    ? `reports are computed from ${bounds.first.date} to ${bounds.latest.date}`
    : 'no report has been computed yet'
  return new ApiError('IR4000', `no computed report for ${what}: ${known}`)
}

/** The report answering for `date` (YYYY-MM-DD, already validated), or 404 IR4000. */
export async function reportOr404(repos: Repos, date: string): Promise<ReportDay> {
  const day = await repos.reports.day(date)
  if (!day) throw await noReport(repos, date)
  return day
}

/**
 * The range of a summary: `to` defaults to the latest computed date, `from` to 29 days before `to`.
 * from > to, or more than 366 days: 400 IR4001. Returns the reports of the range (404 IR4000 when none).
 */
export async function summaryRange(
  repos: Repos,
  query: { from?: string | undefined; to?: string | undefined },
): Promise<{ from: string; to: string; days: ReportDay[] }> {
  let to = query.to === undefined ? undefined : parseDate(query.to, 'to')
  const fromGiven = query.from === undefined ? undefined : parseDate(query.from, 'from')
  if (to === undefined) {
    const bounds = await repos.reports.bounds()
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
  const days = await repos.reports.daysBetween(from, to)
  if (days.length === 0) throw await noReport(repos, `${from} to ${to}`)
  return { from, to, days }
}

/** Sets `X-Report-Epoch` / `X-Report-Date`: the report a response reflects (the latest one for ranges). */
export function setReportHeaders(reply: FastifyReply, day: Pick<ReportDay, 'report_epoch' | 'date'>): void {
  reply.header('x-report-epoch', day.report_epoch)
  reply.header('x-report-date', day.date)
}

/**
 * ETag of a response built from computed days: the days' (epoch, visible version, content hash) and the
 * request's normalized inputs. Set only when every day is `computed` (a day being recomputed answers with
 * `Cache-Control: no-cache` and no ETag). Returns true, after answering 304, when If-None-Match matches.
 */
export function notModified(
  request: FastifyRequest,
  reply: FastifyReply,
  days: readonly Pick<ReportDay, 'report_epoch' | 'visible_version' | 'content_hash' | 'status'>[],
  inputs: unknown,
): boolean {
  if (days.length === 0 || days.some((d) => d.status !== 'computed')) {
    reply.header('cache-control', 'no-cache')
    return false
  }
  const hash = createHash('sha256')
  hash.update(`${request.method} ${request.routeOptions.url}\n${JSON.stringify(inputs)}\n`)
  for (const d of days) hash.update(`${d.report_epoch}:${d.visible_version}:${d.content_hash ?? ''}\n`)
  const etag = `"${hash.digest('base64url').slice(0, 32)}"`
  reply.header('etag', etag)
  reply.header('cache-control', 'private, no-cache')
  const match = request.headers['if-none-match']
  if (match === undefined) return false
  const tags = match.split(',').map((t) => t.trim().replace(/^W\//, ''))
  if (tags.includes(etag) || tags.includes('*')) {
    reply.code(304).send()
    return true
  }
  return false
}

/**
 * The organization a reporting read is made for: the token's, or the one named by `Impersonate-Org`
 * (only with the `impersonate:org` scope: else 403 IR2003; an unknown organization: 404 IR2008).
 */
export async function readingOrg(request: FastifyRequest, repos: Repos): Promise<string> {
  const auth = caller(request)
  const header = request.headers['impersonate-org']
  if (header === undefined) return auth.orgId
  const orgId = (Array.isArray(header) ? header[0] : header)?.trim() ?? ''
  if (!auth.scopes.includes('impersonate:org')) {
    throw new ApiError('IR2003', 'Impersonate-Org needs the impersonate:org scope')
  }
  if (orgId === '' || !(await repos.orgs.get(orgId))) {
    throw new ApiError('IR2008', `organization ${JSON.stringify(orgId)} not found`)
  }
  return orgId
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
