import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ApiError } from '../errors.ts'
import { StringEnum } from '../schemas.ts'

/** CSV answers of the reporting reads (`?format=csv` or `Accept: text/csv`). */

/** The formats a reporting read answers in (`?format=`). */
const FORMATS = ['json', 'csv'] as const

/**
 * The `format` query parameter of every read that can answer CSV (every route whose 200 is `jsonOrCsv`):
 * spread into its querystring schema, so the OpenAPI document declares it once, the same on each route.
 *
 * @example
 * querystring: Type.Object({ ...AsOfQuery, ...FormatQuery })
 */
export const FormatQuery = {
  format: Type.Optional(
    StringEnum(FORMATS, {
      description:
        'csv: the answer as CSV, as with Accept: text/csv (a link a spreadsheet or a browser can open); json: ' +
        'JSON whatever Accept says. Absent: CSV when Accept names text/csv, else JSON. The same answer (bytes ' +
        'and ETag) either way it is asked for',
    }),
  ),
}

/**
 * True when the client asks for CSV: `?format=csv`, or, without a `format`, `Accept: text/csv`
 * (`?format=json` answers JSON whatever Accept says). Any other `format` is 400 IR1000 (a route that
 * declares `FormatQuery` refuses it in validation already).
 *
 * @example
 * wantsCsv(request) // true for GET ...?format=csv, and for Accept: text/csv without a format
 */
export function wantsCsv(request: FastifyRequest): boolean {
  const format = (request.query as { format?: unknown } | undefined)?.format
  if (format !== undefined) {
    if (format === 'csv') return true
    if (format === 'json') return false
    throw new ApiError('IR1000', `querystring/format must be one of ${FORMATS.join(', ')}`)
  }
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

/**
 * A JSON response whose 200 may also be CSV (documented in OpenAPI); its route's querystring spreads
 * `FormatQuery` (test/csv-format.test.ts holds every such route of the document to it).
 */
export function jsonOrCsv<T>(schema: T) {
  return {
    description:
      'JSON, or CSV (one row per wallet-day, a header row) with ?format=csv or Accept: text/csv (format wins)',
    content: {
      'application/json': { schema },
      'text/csv': { schema: Type.String() },
    },
  }
}
