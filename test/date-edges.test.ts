import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ERROR_CATALOG } from '../api/errors.ts'
import { createClient } from '../cli/admin.ts'
import { type DbHandle, migrate, openDb } from '../db/index.ts'
import { runs } from '../fixtures/property-runs.ts'
import { clientToken, startTestApi, type TestApi } from './helpers/api.ts'
import { type RewardsDay, seedRewardsDay } from './helpers/rewards-day.ts'

/**
 * Issue 36, item 5: every date and range parameter of the served OpenAPI document (path, query and body; a
 * parameter is a date when its name is date/from/to or its description or pattern says YYYY-MM-DD, an instant
 * when its description says RFC 3339) at its edges (0000-01-01, the day before the epoch, 1970-01-01,
 * 1970-01-02, 9999-12-31, the computed dates), alone and in every from/to pair (ranges ending before the
 * epoch, from after to), then in random combinations: no answer is a 5xx, every 4xx is `{message, status}`
 * with the catalog code of its HTTP status. The random part runs `runs(5)` cases per operation
 * (PROPERTY_RUNS_SCALE raises it; the seed is printed on failure).
 */

const ALL_SCOPES =
  'read:platform write:platform read:sol-allowlist write:sol-allowlist read:eth-rewards read:eth-redeems impersonate:org admin'
const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'

type Kind = 'date' | 'instant'
type Schema = { type?: string; description?: string; pattern?: string; properties?: Record<string, Schema> }
type Parameter = { in: string; name: string; required?: boolean; description?: string; schema?: Schema }
interface Operation {
  method: string
  path: string
  parameters: Parameter[]
  body?: (Schema & { items?: Schema }) | undefined
}
/** One date input of an operation: where it goes, its name, date or instant, whether it may be left out. */
interface DateInput {
  in: 'path' | 'query' | 'body'
  name: string
  kind: Kind
  required: boolean
}

/** A date or an instant, from the document's own words. */
function kindOf(name: string, schema: Schema | undefined, description: string | undefined): Kind | undefined {
  const text = `${description ?? ''} ${schema?.description ?? ''}`
  if (/RFC 3339/.test(text)) return 'instant'
  if (/YYYY-MM-DD/.test(text) || schema?.pattern === DATE_PATTERN) return 'date'
  if (['date', 'from', 'to'].includes(name)) return 'date'
  return undefined
}

/** The date inputs of an operation: its parameters, the properties of its body (or of its body's items). */
function dateInputs(op: Operation): DateInput[] {
  const inputs: DateInput[] = []
  for (const p of op.parameters) {
    const kind = kindOf(p.name, p.schema, p.description)
    if (kind && (p.in === 'path' || p.in === 'query'))
      inputs.push({ in: p.in, name: p.name, kind, required: p.required === true })
  }
  const object = op.body?.type === 'array' ? op.body.items : op.body
  const required = new Set((object as { required?: string[] } | undefined)?.required ?? [])
  for (const [name, schema] of Object.entries(object?.properties ?? {})) {
    const kind = kindOf(name, schema, undefined)
    if (kind) inputs.push({ in: 'body', name, kind, required: required.has(name) })
  }
  return inputs
}

const INSTANT_EDGES = [
  '0000-01-01T00:00:00Z',
  '1969-12-31T23:59:59Z',
  '1970-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '9999-12-31T23:59:59.999-23:59',
  '1970-01-01T00:00:00+23:59',
]

describe('date and range parameters of the OpenAPI document at their edges', () => {
  let dbh: DbHandle
  let api: TestApi
  let seeded: RewardsDay
  let token: string
  let first: string

  beforeAll(async () => {
    dbh = await openDb({ poolMax: 4 })
    await migrate(dbh.db)
    seeded = await seedRewardsDay(dbh.db, { holders: 100, reports: 3, sample: 4 })
    const [earliest] = await dbh
      .db('days')
      .orderBy('date')
      .limit(1)
      .select(dbh.db.raw("to_char(date, 'YYYY-MM-DD') as d"))
    first = (earliest as { d: string }).d
    api = await startTestApi('pglite', { RATE_LIMIT_MAX: '1000000' }, { dbh })
    const client = await createClient(dbh.db, { orgId: seeded.orgId, scopes: ALL_SCOPES })
    token = await clientToken(api.url, client)
  }, 120_000)
  afterAll(async () => {
    await api?.close()
    await dbh?.close()
  })

  test('behavior: no date, instant or range at its edges (alone, in from/to pairs, at random) answers a 5xx', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
      paths: Record<
        string,
        Record<
          string,
          { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } }
        >
      >
    }
    const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        ...(op.requestBody ? { body: op.requestBody.content['application/json']?.schema } : {}),
      })),
    )
    const dated = operations.filter((op) => dateInputs(op).length > 0)
    const last = seeded.date
    const DATE_EDGES = ['0000-01-01', '1969-12-31', '1970-01-01', '1970-01-02', '9999-12-31', first, last]
    const address = seeded.ownAddresses[0] as string

    /** The inputs of an operation that are not dates, valid for the seeded history. */
    const BASE: Record<
      string,
      { path?: Record<string, string>; query?: Record<string, string>; body?: unknown }
    > = {
      'GET /eth/v1/redeems': {},
      'GET /eth/v1/redeems/{idx}': { path: { idx: '1' } },
      'GET /eth/v1/redeems_info': {},
      'GET /eth/v0/redeems': { query: { owner: address } },
      'GET /eth/v0/redeems/{idx}': { path: { idx: '1' } },
      'GET /eth/v0/redeems_info': {},
      'POST /eth/v1/rewards': { body: [{ balance: '1.5' }] },
      'POST /eth/v1/rewards/wallets': { body: { addresses: [address] } },
      'POST /eth/v1/rewards/accounts': { body: { accounts: [seeded.accountKey] } },
      'POST /eth/v0/rewards/accounts': { body: { accounts: [seeded.accountKey] } },
      'GET /eth/v1/rewards/wallets/{idOrKey}/summary': { path: { idOrKey: address } },
      'GET /eth/v1/rewards/accounts/{idOrKey}/summary': { path: { idOrKey: seeded.accountKey } },
      'GET /eth/v0/rewards/wallets/{idOrKey}/summary': { path: { idOrKey: address } },
      'GET /eth/v0/rewards/accounts/{idOrKey}/summary': { path: { idOrKey: seeded.accountKey } },
      'GET /eth/v1/rewards/organization/summary': {},
      'GET /eth/v0/rewards/organization/summary': { query: { group_by: 'month' } },
      'GET /eth/v1/platforms/{date}': {},
      'GET /eth/v1/originators/{date}': {},
      'GET /eth/v1/operators/{date}': {},
      'GET /eth/v0/platforms/{date}': {},
      'GET /eth/v0/operators/{date}': {},
      'GET /eth/v0/protocol/{date}': {},
      'GET /v1/reports/{date}/versions': {},
      'GET /v1/admin/days': {},
      'POST /v1/admin/backfill': { body: {} },
      'POST /v1/exports': { body: { kind: 'records' } },
    }
    const keys = dated.map((op) => `${op.method} ${op.path}`)
    expect(
      keys.filter((k) => !(k in BASE)),
      'operations with a date input and no entry in BASE',
    ).toEqual([])
    expect(keys.length).toBeGreaterThanOrEqual(20)

    /** The request of an operation with these date values (undefined: left out; a required one gets `last`). */
    const request = (op: Operation, values: Record<string, string | undefined>) => {
      const base = BASE[`${op.method} ${op.path}`] ?? {}
      const inputs = dateInputs(op)
      const dateOf = (i: DateInput) => values[i.name] ?? (i.required ? last : undefined)
      const url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
        const input = inputs.find((i) => i.in === 'path' && i.name === name)
        return encodeURIComponent((input ? dateOf(input) : base.path?.[name]) ?? 'x')
      })
      const query = new URLSearchParams(base.query)
      for (const i of inputs) {
        const v = dateOf(i)
        if (i.in === 'query' && v !== undefined) query.set(i.name, v)
      }
      let payload: unknown = base.body
      const bodyDates = Object.fromEntries(
        inputs.filter((i) => i.in === 'body' && dateOf(i) !== undefined).map((i) => [i.name, dateOf(i)]),
      )
      if (Array.isArray(payload)) payload = payload.map((item) => ({ ...item, ...bodyDates }))
      else if (payload !== undefined) payload = { ...(payload as object), ...bodyDates }
      const qs = query.toString()
      return { method: op.method, url: qs ? `${url}?${qs}` : url, payload }
    }

    const statuses = new Map<number, number>()
    const send = async (req: { method: string; url: string; payload: unknown }) => {
      const res = await api.app.inject({
        method: req.method as 'GET',
        url: req.url,
        headers: { authorization: `Bearer ${token}` },
        ...(req.payload !== undefined ? { payload: req.payload as object } : {}),
      })
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      const label = `${req.method} ${req.url} ${JSON.stringify(req.payload) ?? ''} -> ${res.statusCode} ${res.body.slice(0, 300)}`
      expect(res.statusCode, label).toBeLessThan(500)
      if (res.statusCode >= 400) {
        const body = res.json() as { message: string; status: keyof typeof ERROR_CATALOG }
        expect(body, label).toEqual({
          message: expect.any(String),
          status: expect.stringMatching(/^IR\d{4}$/),
        })
        expect(ERROR_CATALOG[body.status]?.http, label).toBe(res.statusCode)
      }
    }
    const edgesOf = (kind: Kind) => (kind === 'date' ? DATE_EDGES : INSTANT_EDGES)

    for (const op of dated) {
      const inputs = dateInputs(op)
      // every input alone at each edge (the others left out, or at the last computed date when required)
      for (const input of inputs) {
        for (const value of edgesOf(input.kind)) await send(request(op, { [input.name]: value }))
      }
      // every from/to pair: ranges ending before the epoch, from after to, a bound left out
      const from = inputs.find((i) => i.name === 'from')
      const to = inputs.find((i) => i.name === 'to')
      if (from && to) {
        const bounds = ['0000-01-01', '1970-01-01', '1970-01-02', '9999-12-31', undefined]
        for (const f of bounds) for (const t of bounds) await send(request(op, { from: f, to: t }))
      }
      // random combinations of every date input
      const model = Object.fromEntries(
        inputs.map((i) => [i.name, fc.option(fc.constantFrom(...edgesOf(i.kind)), { nil: undefined })]),
      )
      await fc.assert(
        fc.asyncProperty(fc.record(model), (values) => send(request(op, values))),
        { numRuns: runs(5), endOnFailure: true },
      )
    }
    // the edges reached the handlers: some answers are 2xx, some refusals, some without a report
    expect([...statuses.keys()].some((s) => s >= 200 && s < 300)).toBe(true)
    expect(statuses.get(400)).toBeGreaterThan(0)
    expect(statuses.get(404)).toBeGreaterThan(0)
  }, 120_000)

  test('behavior: a summary to the epoch without from covers 1970-01-01 only (the default from is clamped, docs/decisions.md), and says no report exists there', async () => {
    for (const path of [
      `/eth/v1/rewards/wallets/${seeded.ownAddresses[0]}/summary`,
      `/eth/v0/rewards/wallets/${seeded.ownAddresses[0]}/summary`,
      `/eth/v1/rewards/accounts/${seeded.accountKey}/summary`,
      `/eth/v0/rewards/accounts/${seeded.accountKey}/summary`,
    ]) {
      const res = await api.app.inject({
        method: 'GET',
        url: `${path}?to=1970-01-01`,
        headers: { authorization: `Bearer ${token}` },
      })
      expect([res.statusCode, res.json()], path).toEqual([
        404,
        {
          message: expect.stringMatching(
            /^no computed report for 1970-01-01( to 1970-01-01)?: reports are computed from /,
          ),
          status: 'IR4000',
        },
      ])
    }
  })
})
