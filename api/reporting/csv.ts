import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'

/** CSV answers of the reporting reads (`Accept: text/csv`). */

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
