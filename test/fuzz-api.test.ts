import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ERROR_CATALOG } from '../api/errors.ts'
import { duplicateJsonKey } from '../api/json-body.ts'
import { createClient } from '../cli/admin.ts'
import type { Db } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { createPlatformService } from '../platform/service.ts'
import { type Backend, clientToken, startTestApi, type TestApi } from './helpers/api.ts'
import { type ComputedHistory, computedHistory } from './helpers/days.ts'
import { postgresAvailable } from './helpers/services.ts'

/**
 * API fuzz test driven by the served OpenAPI document (issue 9): for every operation, fast-check builds
 * requests from its parameters, headers and body schema, mixing valid values (existing accounts, wallets,
 * dates, redeem ids) with arbitrary and boundary ones (NUL, lone surrogates, huge numbers, deep nesting,
 * wrong types, wrong content types, no or bad tokens). Every answer must be below 500; every 4xx must be
 * `{message, status}` with a catalog code of that HTTP status; and a refused request must change nothing
 * (a digest of the platform tables before and after).
 *
 * FUZZ_RUNS (default 2000) cases in all, shared by the backends and spread over the operations;
 * FUZZ_SEED replays a run (the seed is printed on failure).
 */

const pgOk = await postgresAvailable()
const backends: Backend[] = pgOk ? ['pglite', 'postgres'] : ['pglite']
const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 2000)
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)

const ALL_SCOPES =
  'read:platform write:platform read:sol-allowlist write:sol-allowlist read:eth-rewards read:eth-redeems impersonate:org admin'

/** The platform tables a refused request must not change. */
const PLATFORM_TABLES = [
  'orgs',
  'api_clients',
  'api_client_secrets',
  'accounts',
  'wallets',
  'status_changes',
  'allowlist_changes',
  'discount_rates',
  'sol_allowlist',
]

/** One digest of every platform table's rows (one query). */
async function platformDigest(db: Db): Promise<string> {
  const parts = PLATFORM_TABLES.map(
    (t) => `(select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) from ${t} x) as ${t}`,
  )
  const result = await db.raw(`select ${parts.join(', ')}`)
  return JSON.stringify(result.rows[0])
}

type Schema = {
  type?: string
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  minimum?: number
  maximum?: number
  minItems?: number
  maxItems?: number
  pattern?: string
}

interface Operation {
  method: string
  path: string
  parameters: { in: string; name: string; required?: boolean; schema: Schema }[]
  body?: Schema | undefined
}

interface FuzzRequest {
  method: string
  url: string
  headers: Record<string, string>
  payload?: string
}

/** Values that reach deep into handlers (existing records), per field name. */
interface Pools {
  keys: string[]
  ids: string[]
  addresses: string[]
  walletIds: string[]
  dates: string[]
  redeemIds: string[]
  orgs: string[]
}

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '%00',
  '\ud800',
  'x\udfff',
  '\udbff\udfff',
  '😀',
  'null',
  'true',
  '0',
  '-1',
  '1e19',
  '0x1',
  '99999999999999999999',
  '9223372036854775807',
  "'; drop table accounts; --",
  '../../etc/passwd',
  '<xml/>',
  'a'.repeat(300),
  'é'.repeat(100),
]
const NASTY_NUMBERS = [0, -1, 1, 0.5, -0.0, 2 ** 31, 2 ** 31 - 1, 2 ** 53, 1e19, 1e308, -1e308, 1e20]

function deep(depth: number): unknown {
  let v: unknown = 'x'
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { a: v }
  return v
}

/** A JSON object's text with its first key given again at its end (other texts as they are). */
function withDuplicateKey(text: string): string {
  const match = /^\{("(?:[^"\\]|\\.)*"):/.exec(text)
  return match ? `${text.slice(0, -1)},${match[1]}:"again"}` : text
}

/** Anything JSON can carry, with a bias to the nasty values. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS),
  fc.constantFrom(...NASTY_NUMBERS),
  fc.constantFrom(null, true, false, [], {}, deep(40), deep(500)),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.jsonValue({ maxDepth: 3 }),
)

/** A string for a field: valid values of that kind, arbitrary and nasty strings. */
function stringFor(name: string, pools: Pools): fc.Arbitrary<string> {
  const n = name.toLowerCase()
  const pool: string[] = []
  if (n.includes('address') || n === 'owner' || n.includes('idoraddress')) {
    pool.push(
      ...pools.addresses,
      ...pools.walletIds,
      ...pools.addresses.map((a) => a.toUpperCase().replace('0X', '0x')),
    )
    pool.push('0x0000000000000000000000000000000000000000', '11111111111111111111111111111111')
  }
  if (n.includes('idorkey') || n.includes('account'))
    pool.push(...pools.keys, ...pools.ids, ...pools.addresses)
  if (n.includes('date') || n === 'from' || n === 'to') {
    pool.push(...pools.dates, '2026-02-30', '2026-5-1', '9999-12-31', '0000-01-01', '2026-05-01T00:00:00Z')
  }
  if (n === 'ids' || n === 'idx')
    pool.push(...pools.redeemIds, pools.redeemIds.join(','), '1,,2', '0,4294967296')
  if (n.includes('impersonate')) pool.push(...pools.orgs)
  if (n === 'balance') pool.push('1', '0', '-1', '1.5', '0.0000000000000000001', '1e3', `1${'0'.repeat(80)}`)
  if (n.includes('fee_rate')) pool.push('0.05', '0', '1', '0.15', ' 0.1', '1e-3')
  if (n === 'unit') pool.push('eth', 'lseth', 'wei')
  if (n === 'type') pool.push('ETH', 'SOL', 'eth')
  if (n === 'grant_type') pool.push('client_credentials', 'password')
  // account keys: shaped like ids, invisible and format characters, both normalizations of one key
  if (n === 'key')
    pool.push(
      ...pools.ids,
      ...pools.ids.map((id) => id.toUpperCase()),
      '\u200b',
      'abc\u202egpj.exe',
      'cafe\u0301',
      'caf\u00e9',
    )
  const choices: fc.Arbitrary<string>[] = [
    fc.constantFrom(...NASTY_STRINGS),
    fc.string({ maxLength: 30 }),
    fc.string({ unit: 'binary', maxLength: 30 }),
  ]
  if (pool.length > 0) choices.unshift(fc.constantFrom(...pool))
  return fc.oneof(...choices)
}

/** A value for a schema: mostly of its type (valid-ish), sometimes of any type. */
function valueFor(schema: Schema | undefined, name: string, pools: Pools, depth = 0): fc.Arbitrary<unknown> {
  const s = schema ?? {}
  const branches = s.anyOf ?? s.oneOf
  const typed: fc.Arbitrary<unknown>[] = []
  if (branches && depth < 4) for (const b of branches) typed.push(valueFor(b, name, pools, depth + 1))
  if (s.const !== undefined) typed.push(fc.constant(s.const))
  if (s.enum) typed.push(fc.constantFrom(...s.enum))
  switch (s.type) {
    case 'string':
      typed.push(stringFor(name, pools))
      break
    case 'integer':
    case 'number': {
      const low = s.minimum ?? -(2 ** 31)
      const high = s.maximum ?? 2 ** 31
      typed.push(
        fc.integer({ min: Math.max(low, -(2 ** 31)), max: Math.min(high, 2 ** 31) }),
        fc.constantFrom(low, high, low - 1, high + 1, ...NASTY_NUMBERS),
      )
      break
    }
    case 'boolean':
      typed.push(fc.boolean(), fc.constantFrom('true', 'false', 1, 0, null))
      break
    case 'array':
      if (depth < 4) {
        typed.push(
          fc.array(valueFor(s.items, name, pools, depth + 1), { maxLength: 4 }),
          fc.array(valueFor(s.items, name, pools, depth + 1), { minLength: 1001, maxLength: 1003 }),
        )
      }
      break
    case 'object':
      if (depth < 4) typed.push(objectFor(s, pools, depth + 1))
      break
  }
  if (typed.length === 0) return anyJson
  return fc.oneof({ arbitrary: fc.oneof(...typed), weight: 4 }, { arbitrary: anyJson, weight: 1 })
}

/** An object for a schema: some or all of its properties, sometimes extra ones. */
function objectFor(s: Schema, pools: Pools, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props = Object.entries(s.properties ?? {})
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [k, v] of props) model[k] = valueFor(v, k, pools, depth)
  const required = (s.required ?? []).filter((k) => k in model)
  return fc
    .tuple(
      fc.record(model, { requiredKeys: [] }),
      fc.record(model, { requiredKeys: required }),
      fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 2 }),
      fc.integer({ min: 0, max: 9 }),
    )
    .map(([loose, strict, extra, pick]) => (pick < 5 ? strict : pick < 8 ? loose : { ...strict, ...extra }))
}

/** Percent-encodes a value for a URL; lone surrogates (which encodeURIComponent refuses) as CESU-8 bytes. */
function encode(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '')
  try {
    return encodeURIComponent(text)
  } catch {
    return text
      .split('')
      .map((c) => {
        const code = c.charCodeAt(0)
        if (code >= 0xd800 && code <= 0xdfff) {
          return `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase()
        }
        return encodeURIComponent(c)
      })
      .join('')
  }
}

/** Requests for one operation. */
function requestsFor(op: Operation, pools: Pools, tokens: string[]): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path')
  const queryParams = op.parameters.filter((p) => p.in === 'query')
  const headerParams = op.parameters.filter((p) => p.in === 'header')
  const path = fc.record(
    Object.fromEntries(pathParams.map((p) => [p.name, fc.oneof(valueFor(p.schema, p.name, pools), anyJson)])),
  )
  const query = fc.record(
    Object.fromEntries(
      [...queryParams.map((p) => p.name), 'extra'].map((name) => [
        name,
        valueFor(queryParams.find((p) => p.name === name)?.schema, name, pools),
      ]),
    ),
    { requiredKeys: [] },
  )
  const headers = fc.record(
    Object.fromEntries(
      [...headerParams.map((p) => p.name), 'x-request-id'].map((name) => [name, stringFor(name, pools)]),
    ),
    { requiredKeys: [] },
  )
  const body = op.body
    ? fc.oneof(
        { arbitrary: valueFor(op.body, 'body', pools).map((v) => JSON.stringify(v) ?? ''), weight: 8 },
        { arbitrary: fc.constantFrom('{', '[1,', 'null', '', '{"a":1}x', '\u0000'), weight: 1 },
        { arbitrary: anyJson.map((v) => JSON.stringify(v) ?? ''), weight: 1 },
        // the same key twice: refused (400 IR1001), never the last one winning
        {
          arbitrary: valueFor(op.body, 'body', pools).map((v) => withDuplicateKey(JSON.stringify(v) ?? '')),
          weight: 1,
        },
      )
    : fc.option(
        anyJson.map((v) => JSON.stringify(v) ?? ''),
        { freq: 5 },
      )
  const contentType = fc.constantFrom(
    'application/json',
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/xml',
  )
  return fc
    .record({ path, query, headers, body, contentType, token: fc.constantFrom(...tokens) })
    .map(({ path: p, query: q, headers: h, body: b, contentType, token }) => {
      const url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encode(p[name]))
      const qs = Object.entries(q)
        .map(([k, v]) => `${encodeURIComponent(k)}=${encode(v)}`)
        .join('&')
      const headerValues: Record<string, string> = {}
      for (const [k, v] of Object.entries(h)) headerValues[k] = String(v)
      if (token !== '') headerValues.authorization = token
      const payload = b ?? undefined
      if (payload !== undefined) headerValues['content-type'] = contentType
      return {
        method: op.method,
        url: qs ? `${url}?${qs}` : url,
        headers: headerValues,
        ...(payload !== undefined ? { payload } : {}),
      }
    })
}

describe('API fuzz from the OpenAPI document', () => {
  let history: ComputedHistory
  const apis = new Map<Backend, TestApi>()

  beforeAll(async () => {
    history = await computedHistory({
      backends,
      before: 1,
      after: 2,
      walletCount: 10,
      simulator: { behavior: { redeem: 0.3 } },
      onboard: async (db, _backend, devnet) => {
        const holders = devnet.simulator
          .state()
          .wallets.filter((w) => w.shares > 0n)
          .map((w) => w.address.toLowerCase())
        const repos = createRepos(db)
        const platform = createPlatformService(db)
        const org = await repos.orgs.create({ name: 'fuzzer', canAllowlist: true })
        const other = await repos.orgs.create({ name: 'other', canAllowlist: false })
        await platform.createAccount(org.id, 'fuzz-account', 'test')
        await platform.createAccount(other.id, 'fuzz-account', 'test')
        if (holders[0]) {
          await platform.createWallet(
            org,
            'fuzz-account',
            { address: holders[0], type: 'ETH', allowlisted: false },
            'test',
          )
        }
        await platform.addDiscountRate(org.id, 'fuzz-account', '0.05', 'test')
      },
    })
    for (const [backend, dbh] of history.databases) {
      apis.set(
        backend,
        await startTestApi(backend, { DATA_DIR: history.dataDir, RATE_LIMIT_MAX: '1000000' }, { dbh }),
      )
    }
  })
  afterAll(async () => {
    for (const api of apis.values()) await api.close()
    await history?.close()
  })

  test.each(backends)(
    'behavior: no request makes a 5xx; every 4xx is {message, status} in the catalog; a refused request changes nothing (%s)',
    async (backend) => {
      const api = apis.get(backend) as TestApi
      const db = api.dbh.db
      const doc = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
        paths: Record<
          string,
          Record<
            string,
            {
              parameters?: Operation['parameters']
              requestBody?: { content: Record<string, { schema: Schema }> }
            }
          >
        >
      }
      const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, op]) => ({
          method: method.toUpperCase(),
          path,
          parameters: op.parameters ?? [],
          ...(op.requestBody
            ? {
                body: (op.requestBody.content['application/json'] ?? Object.values(op.requestBody.content)[0])
                  ?.schema,
              }
            : {}),
        })),
      )

      const org = await db('orgs').where({ name: 'fuzzer' }).first()
      const client = await createClient(db, { orgId: org.id, scopes: ALL_SCOPES })
      const token = `Bearer ${await clientToken(api.url, client)}`
      const accounts = await db('accounts').select('id', 'key')
      const wallets = await db('wallets').select('id', 'address')
      const days = await db('days').select(db.raw("to_char(date, 'YYYY-MM-DD') as d"))
      const redeems = await db('redeem_requests').select('request_id')
      const pools: Pools = {
        keys: accounts.map((a: { key: string }) => a.key),
        ids: accounts.map((a: { id: string }) => a.id),
        addresses: wallets.map((w: { address: string }) => w.address),
        walletIds: wallets.map((w: { id: string }) => w.id),
        dates: days.map((d: { d: string }) => d.d),
        redeemIds: redeems.map((r: { request_id: string }) => String(r.request_id)),
        orgs: (await db('orgs').select('id')).map((o: { id: string }) => o.id),
      }
      // mostly the valid token (so requests reach validation and handlers), sometimes none or a bad one
      const tokens = [...Array(10).fill(token), '', 'Bearer not.a.jwt', `${token}x`]
      const runsPerOperation = Math.max(
        5,
        Math.ceil(TOTAL_RUNS / backends.length / Math.max(1, operations.length)),
      )

      let cases = 0
      const statuses = new Map<number, number>()
      for (const op of operations) {
        await fc.assert(
          fc.asyncProperty(requestsFor(op, pools, tokens), async (req) => {
            cases += 1
            const before = await platformDigest(db)
            const res = await api.app.inject({
              method: req.method as 'GET',
              url: req.url,
              headers: req.headers,
              ...(req.payload !== undefined ? { payload: req.payload } : {}),
            })
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
            const label = `${req.method} ${req.url.slice(0, 200)} -> ${res.statusCode} ${res.body.slice(0, 300)}`
            expect(res.statusCode, label).toBeLessThan(500)
            // an account created holds a key of the rules: NFC, not shaped like an id, nothing invisible
            if (op.path === '/v0/platform/accounts' && req.method === 'POST' && res.statusCode === 201) {
              const { key } = JSON.parse(res.body) as { key: string }
              expect(key, label).toBe(key.normalize('NFC'))
              expect(key, label).not.toMatch(
                /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
              )
              expect(key, label).not.toMatch(/[\p{Cc}\p{Cf}]/u)
            }
            const json = String(req.headers['content-type'] ?? '').startsWith('application/json')
            if (json && req.payload !== undefined && res.statusCode < 300) {
              expect(
                duplicateJsonKey(req.payload),
                `a body with a key twice was accepted: ${label}`,
              ).toBeUndefined()
            }
            if (res.statusCode >= 400) {
              const body = JSON.parse(res.body) as Record<string, unknown>
              const { error: _e, error_description: _d, ...rest } = body
              if (op.path !== '/oauth/token')
                expect(Object.keys(body).sort(), label).toEqual(['message', 'status'])
              expect(rest, label).toEqual({
                message: expect.any(String),
                status: expect.stringMatching(/^IR\d{4}$/),
              })
              const code = rest.status as keyof typeof ERROR_CATALOG
              expect(ERROR_CATALOG[code]?.http, label).toBe(res.statusCode)
              expect(
                await platformDigest(db),
                `a refused request changed the platform tables: ${label}`,
              ).toBe(before)
            }
          }),
          { numRuns: runsPerOperation, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true },
        )
      }
      // the run reached the handlers, not only the validators
      expect(cases).toBeGreaterThanOrEqual(operations.length * 5)
      expect([...statuses.keys()].some((s) => s >= 200 && s < 300)).toBe(true)
      console.info(
        `fuzz (${backend}): ${cases} requests over ${operations.length} operations; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
      )
    },
  )
})
