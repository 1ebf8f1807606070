import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * Writes api/openapi/examples.json, the example 2xx answers of the OpenAPI document, from real answers:
 * test/openapi-walk.test.ts calls every operation over a computed devnet history and, run as
 * `OPENAPI_EXAMPLES=write npx vitest run test/openapi-walk.test.ts`, hands its answers here. Long lists are
 * cut to their first two items, secrets become fixed look-alikes and the walk's test names readable ones.
 */

/** Where the examples live (imported by api/openapi/document.ts). */
export const EXAMPLES_FILE = fileURLToPath(new URL('../../api/openapi/examples.json', import.meta.url))

/** True when this run writes the examples. */
export const WRITING_EXAMPLES = process.env.OPENAPI_EXAMPLES === 'write'

/** Items kept of a list in an example. */
const LIST_ITEMS = 2

/** Fixed values of fields that hold secrets in a real answer (a token, a webhook signing secret). */
const SECRET_FIELDS: Record<string, string> = {
  access_token:
    'eyJhbGciOiJFZERTQSIsImtpZCI6ImtleS0yMDI2LTA0IiwidHlwIjoiSldUIn0.' +
    'eyJpc3MiOiJodHRwczovL3JlcG9ydHMuZXhhbXBsZS5jb20iLCJzdWIiOiJjbF81ZjBjOWExZTdiM2QyYzRhNmU4ZjBhMWIifQ.' +
    'c2lnbmF0dXJlLW9mLXRoZS1leGFtcGxlLXRva2VuLW5vdC1hLXJlYWwtb25l',
  secret: `whsec_${Buffer.alloc(32, 0x5a).toString('base64')}`,
}

/** The walk's names, as a platform would name its accounts. */
function readable(text: string): string {
  return text
    .replace(/^walk-account$/, 'customer-8812')
    .replace(/^walk-new-(pglite|postgres)$/, 'customer-9001')
    .replace(/^walk-(pglite|postgres)-(\d+)$/, (_m, _b, n: string) => `customer-${9100 + Number(n)}`)
    .replace(/^https:\/\/93\.184\.215\.14\/hook$/, 'https://hooks.example.com/lsreport')
}

/** An answer made an example: lists cut, secrets and names replaced. */
function exampleOf(value: unknown, field = ''): unknown {
  if (Array.isArray(value)) return value.slice(0, LIST_ITEMS).map((item) => exampleOf(item, field))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, exampleOf(v, k)]))
  }
  if (typeof value === 'string') return SECRET_FIELDS[field] ?? readable(value)
  return value
}

/**
 * A CSV answer made an example: its header line and first rows (as many as LIST_ITEMS).
 *
 * @example
 * csvExample('a,b\n1,2\n3,4\n5,6\n') // 'a,b\n1,2\n3,4\n'
 */
export function csvExample(text: string): string {
  const lines = text.split(/(?<=\n)/)
  return lines.slice(0, 1 + LIST_ITEMS).join('')
}

/**
 * Writes the examples: `answers` maps an operation key (`METHOD /path`) to its 2xx answer bodies by status
 * (`"200"`: the JSON answer; `"200 text/csv"`: the same answer in another media type).
 * The file is formatted by the project's formatter.
 *
 * @example
 * writeAnswerExamples({ 'GET /health': { 200: { status: 'ok' } } })
 */
export function writeAnswerExamples(answers: Record<string, Record<string, unknown>>): void {
  const sorted = Object.fromEntries(
    Object.keys(answers)
      .sort()
      .map((key) => [key, exampleOf(answers[key])]),
  )
  fs.writeFileSync(EXAMPLES_FILE, `${JSON.stringify(sorted, null, 2)}\n`)
  execFileSync('npx', ['biome', 'format', '--write', EXAMPLES_FILE], { stdio: 'ignore' })
}
