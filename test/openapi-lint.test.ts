import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import SwaggerParser from '@apidevtools/swagger-parser'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { requireOperationDocs } from '../api/openapi/document.ts'
import EXAMPLES from '../api/openapi/examples.json' with { type: 'json' }
import { HEADERS, OPTIONAL_RATE_LIMIT_HEADERS } from '../api/openapi/headers.ts'
import { UNLIMITED_ROUTES } from '../api/plugins/rate-limit.ts'
import { http, startTestApi, type TestApi } from './helpers/api.ts'
import { type Answer, answerChecker, openapiAjv } from './helpers/openapi-answers.ts'

/**
 * The served OpenAPI document (`/docs/json`) as client generators read it: valid for swagger-parser, no
 * error for `redocly lint` (recommended rules), an operationId on every operation, `security` everywhere
 * (`[]` when public), valid examples, the headers the API sends declared; and the rate limit's
 * RateLimit-Policy / RateLimit fields (draft-ietf-httpapi-ratelimit-headers) over HTTP.
 */

const run = promisify(execFile)
const REDOCLY = path.join(path.resolve(import.meta.dirname, '..'), 'node_modules', '.bin', 'redocly')

interface Media {
  schema?: object
  example?: unknown
}
interface Operation {
  operationId?: string
  security?: Record<string, string[]>[]
  requestBody?: { content: Record<string, Media> }
  responses: Record<string, { headers?: Record<string, { $ref?: string }>; content?: Record<string, Media> }>
}
interface Doc {
  paths: Record<string, Record<string, Operation>>
  components: { headers: Record<string, unknown> }
}

function operations(doc: Doc): { key: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${p}`, path: p, op })),
  )
}

/** `redocly lint` (recommended rules) of a document, as a process: its problems and exit code. */
async function redoclyLint(doc: unknown): Promise<{
  code: number
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[]
}> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-openapi-'))
  const file = path.join(dir, 'openapi.json')
  await fs.writeFile(file, JSON.stringify(doc))
  try {
    const args = [REDOCLY, 'lint', file, '--format=json', '--extends=recommended', '--max-problems=1000']
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }
    const done = await run(process.execPath, args, { env, maxBuffer: 64 * 1024 * 1024, cwd: dir }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
    )
    return { code: done.code, problems: JSON.parse(done.stdout).problems }
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

describe('the served OpenAPI document, as client generators read it', () => {
  let api: TestApi
  let doc: Doc
  let dereferenced: Doc
  beforeAll(async () => {
    // a small quota: the rate limit test reaches it in four requests
    api = await startTestApi('pglite', { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' })
    const res = await http(api.url)('GET', '/docs/json')
    expect(res.status).toBe(200)
    doc = res.body
    dereferenced = (await SwaggerParser.dereference(structuredClone(doc) as never)) as unknown as Doc
  })
  afterAll(async () => {
    await api?.close()
  })

  test('behavior: swagger-parser validates it', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined()
  })

  test('behavior: redocly lint with the recommended rules reports no error', async () => {
    const { code, problems } = await redoclyLint(doc)
    const errors = problems.filter((p) => p.severity === 'error')
    expect(errors.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)).toEqual([])
    expect(code).toBe(0)
    // warnings are allowed; they are listed in the test output
    for (const p of problems) console.info(`redocly ${p.severity}: ${p.ruleId} ${p.location[0]?.pointer}`)
  })

  test('behavior: redocly lint catches an error planted in the document', async () => {
    const planted = structuredClone(doc)
    delete (planted.paths['/health'] as Record<string, Operation>).get?.security
    const { code, problems } = await redoclyLint(planted)
    expect(code).not.toBe(0)
    expect(problems.some((p) => p.severity === 'error' && p.ruleId === 'security-defined')).toBe(true)
  })

  test('behavior: every operation has a unique camelCase operationId and a security requirement', () => {
    const ops = operations(doc)
    expect(ops.length).toBeGreaterThan(50)
    const ids = ops.map((o) => o.op.operationId)
    expect(ops.filter((o) => !/^[a-z][A-Za-z0-9]+$/.test(o.op.operationId ?? '')).map((o) => o.key)).toEqual(
      [],
    )
    expect(new Set(ids).size).toBe(ids.length)
    expect(ops.filter((o) => !Array.isArray(o.op.security)).map((o) => o.key)).toEqual([])
    const of = (key: string) => ops.find((o) => o.key === key)?.op
    expect(of('GET /health')?.security).toEqual([])
    expect(of('POST /oauth/token')?.security).toEqual([])
    expect(of('GET /v0/platform/accounts')?.security).toEqual([{ bearer: [] }])
    expect(of('POST /eth/v1/rewards/wallets')?.operationId).toBe('getWalletRewards')
    expect(of('GET /v0/platform/accounts')?.operationId).toBe('listAccounts')
  })

  test('behavior: every request body and every 2xx answer has an example that its schema accepts (CSV too)', () => {
    const ajv = openapiAjv()
    const missing: string[] = []
    const invalid: string[] = []
    const check = (label: string, type: string, media: Media) => {
      if (media.example === undefined) return missing.push(label)
      if (type === 'text/csv') {
        if (typeof media.example !== 'string' || !/^[a-z_]+(,[a-z_]+)*\r?\n/.test(media.example)) {
          invalid.push(`${label}: not CSV with a header line`)
        }
      } else if (media.schema) {
        const validate = ajv.compile(media.schema)
        if (!validate(media.example)) invalid.push(`${label}: ${ajv.errorsText(validate.errors)}`)
      }
    }
    for (const { key, op } of operations(dereferenced)) {
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        check(`${key} request ${type}`, type, media)
      }
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^2\d\d$/.test(status)) continue
        for (const [type, media] of Object.entries(response.content ?? {})) {
          check(`${key} ${status} ${type}`, type, media)
        }
      }
    }
    expect(missing).toEqual([])
    expect(invalid).toEqual([])
    // and no example is left of an operation, a status or a media type the document no longer has
    const stale = Object.entries(EXAMPLES as Record<string, Record<string, unknown>>).flatMap(
      ([key, byStatus]) =>
        Object.keys(byStatus).flatMap((entry) => {
          const [status, type = 'application/json'] = entry.split(' ')
          const op = operations(doc).find((o) => o.key === key)?.op
          return op?.responses[status as string]?.content?.[type] ? [] : [`${key} ${entry}`]
        }),
    )
    expect(stale).toEqual([])
  })

  test('behavior: the headers are declared: X-Request-Id everywhere, the rate limit on limited operations, 429 with Retry-After', () => {
    expect(Object.keys(doc.components.headers).sort()).toEqual(
      Object.keys({ ...HEADERS, ...OPTIONAL_RATE_LIMIT_HEADERS }).sort(),
    )
    const problems: string[] = []
    for (const { key, path: p, op } of operations(doc)) {
      const limited = !UNLIMITED_ROUTES.has(p)
      for (const [status, response] of Object.entries(op.responses)) {
        const names = Object.keys(response.headers ?? {})
        if (!names.includes('X-Request-Id')) problems.push(`${key} ${status}: no X-Request-Id`)
        const rate = ['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Remaining'].every((n) =>
          names.includes(n),
        )
        if (/^2\d\d$|^429$/.test(status) && rate !== limited)
          problems.push(`${key} ${status}: rate limit headers`)
      }
      if (limited && !op.responses[429]?.headers?.['Retry-After'])
        problems.push(`${key}: no 429 with Retry-After`)
      if (!op.responses.default) problems.push(`${key}: no default response`)
    }
    expect(problems).toEqual([])
    const ops = operations(doc)
    const headersOf = (key: string) =>
      Object.keys(ops.find((o) => o.key === key)?.op.responses[200]?.headers ?? {})
    expect(headersOf('GET /v0/platform/accounts')).toContain('X-Total-Count')
    expect(headersOf('GET /eth/v1/platforms/{date}')).toEqual(
      expect.arrayContaining(['ETag', 'X-Report-Version']),
    )
  })

  test('behavior: a rate-limited route sends RateLimit-Policy and RateLimit besides the legacy headers, 429 included', async () => {
    const anon = http(api.url)
    const seen: { status: number; policy: string | null; limit: string | null; legacy: string | null }[] = []
    for (let i = 0; i < 4; i++) {
      // every answer also goes through the document's checker (test/helpers/api.ts): declared headers required
      const res = await anon('GET', '/eth/v1/redeems_info')
      seen.push({
        status: res.status,
        policy: res.headers.get('ratelimit-policy'),
        limit: res.headers.get('ratelimit'),
        legacy: res.headers.get('x-ratelimit-remaining'),
      })
      if (res.status === 429) {
        expect(res.body.status).toBe('IR1005')
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
      }
    }
    expect(seen.map((s) => [s.status, s.policy, s.legacy])).toEqual([
      [200, '"default";q=3;w=60', '2'],
      [200, '"default";q=3;w=60', '1'],
      [200, '"default";q=3;w=60', '0'],
      [429, '"default";q=3;w=60', '0'],
    ])
    const remaining = seen.map((s) => /^"default";r=(\d+);t=(\d+)$/.exec(s.limit ?? ''))
    expect(remaining.map((m) => m?.[1])).toEqual(['2', '1', '0', '0'])
    for (const m of remaining) expect(Number(m?.[2])).toBeGreaterThan(0)
    for (const m of remaining) expect(Number(m?.[2])).toBeLessThanOrEqual(60)
  })

  test('behavior: an unlimited route sends no rate limit fields', async () => {
    const res = await http(api.url)('GET', '/health')
    expect(res.status).toBe(200)
    expect([res.headers.get('ratelimit'), res.headers.get('ratelimit-policy')]).toEqual([null, null])
  })

  test('behavior: the answer checker refuses a body or headers unlike the document', async () => {
    const check = await answerChecker(doc)
    const headers = (entries: Record<string, string>) => new Headers(entries)
    const json = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'abc' }
    const answer = (over: Partial<Answer>): Answer => ({
      method: 'GET',
      url: '/health',
      status: 200,
      headers: headers(json),
      text: '{"status":"ok"}',
      ...over,
    })
    expect(check(answer({}))).toEqual([])
    expect(check(answer({ text: '{"state":"ok"}' })).join()).toMatch(/must have required property 'status'/)
    expect(check(answer({ headers: headers({ 'content-type': 'application/json' }) })).join()).toMatch(
      /required header x-request-id is missing/,
    )
    expect(check(answer({ headers: headers({ ...json, 'x-secret-sauce': '1' }) })).join()).toMatch(
      /x-secret-sauce is sent but not declared/,
    )
    expect(check(answer({ headers: headers({ ...json, 'content-type': 'text/plain' }) })).join()).toMatch(
      /text\/plain body, which the document does not declare/,
    )
    // a path parameter, a header of a declared type, the 429 of a limited operation
    const list = answer({
      url: '/v0/platform/accounts?limit=1',
      headers: headers({ ...json, 'x-total-count': 'many' }),
      text: '[]',
    })
    expect(check(list).join()).toMatch(/header x-total-count: "many" must be integer/)
    expect(
      check(answer({ url: '/v1/webhooks/x', status: 429, text: '{"message":"slow down"}' })).join(),
    ).toMatch(/required header retry-after is missing.*must have required property 'status'/s)
  })

  test('behavior: a documented route without an entry in api/openapi/operations.ts is refused when registered', async () => {
    const app = Fastify()
    requireOperationDocs(app)
    app.get('/docs-only', { schema: { hide: true } }, async () => 'hidden routes need no entry')
    app.get('/health', async () => ({ status: 'ok' }))
    expect(() => app.get('/v9/nowhere', async () => ({}))).toThrow(
      'GET /v9/nowhere has no entry in api/openapi/operations.ts',
    )
    await app.close()
  })
})
