import { createHash } from 'node:crypto'
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ERROR_CATALOG } from '../api/errors.ts'
import { createLogger } from '../common/logger.ts'
import { createRepos } from '../db/repos/index.ts'
import { createExportJobs, EXPORT_JOBS } from '../jobs/exports/index.ts'
import type { Processor } from '../jobs/runner.ts'
import { createPlatformService } from '../platform/service.ts'
import { type Backend, clientToken, http, startTestApi, type TestApi } from './helpers/api.ts'
import { type ComputedHistory, computedHistory } from './helpers/days.ts'
import { INTERFACE_ROUTES } from './helpers/interface-routes.ts'
import { csvExample, WRITING_EXAMPLES, writeAnswerExamples } from './helpers/openapi-examples.ts'
import { postgresAvailable } from './helpers/services.ts'

/**
 * Walks the served OpenAPI document (`/docs/json`) over a real socket: every operation is called with a
 * valid request (2xx) and with an invalid one (4xx), and every 4xx body is `{message, status}` with a
 * catalog code of that HTTP status. Every route of the interface is in the document. A route added without
 * an entry in VALID below fails the walk. Every answer is held to the document (test/helpers/openapi-answers.ts).
 * `OPENAPI_EXAMPLES=write` makes the valid answers the document's examples (api/openapi/examples.json).
 */

/** The interface's own text, when this checkout sits beside it: every path it names must be served. */
const SEED = new URL('../../shared/seed/000_ff745646c6529ccc.txt', import.meta.url)
function seedPaths(): string[] {
  if (!fs.existsSync(SEED)) return []
  const text = fs.readFileSync(SEED, 'utf8')
  const paths = new Set<string>()
  for (const m of text.matchAll(/(?:\{auth_url\})?(\/(?:eth|sol|v0|oauth)\/[A-Za-z0-9_/{}:]+)/g)) {
    paths.add((m[1] as string).replace(/:([A-Za-z]+)/g, '{$1}').replace(/\/+$/, ''))
  }
  return [...paths]
}

const ALL_SCOPES =
  'read:platform write:platform read:sol-allowlist write:sol-allowlist read:eth-rewards read:eth-redeems impersonate:org admin'
const SOL_SYSTEM = '11111111111111111111111111111111'

interface Operation {
  method: string
  path: string
  op: {
    parameters?: { in: string; name: string; required?: boolean; schema: { type?: string } }[]
    requestBody?: { content: Record<string, { schema: { type?: string } }> }
    responses?: Record<string, { content?: Record<string, unknown> }>
    security?: unknown[]
  }
}

/** A request: a path with its query, a JSON body, headers; `token: false` sends none. */
interface Req {
  url: string
  body?: unknown
  headers?: Record<string, string>
  token?: false
}

function expectCatalogBody(label: string, status: number, body: unknown) {
  expect(body, label).toEqual({ message: expect.any(String), status: expect.stringMatching(/^IR\d{4}$/) })
  const code = (body as { status: keyof typeof ERROR_CATALOG }).status
  expect(ERROR_CATALOG[code]?.http, `${label}: ${code} is the catalog's code for HTTP ${status}`).toBe(status)
}

/**
 * An invalid request for an operation, derived from its document: a path parameter of the wrong type (or
 * with a NUL), else a body of the wrong type, else a query parameter of the wrong type, else (no input at
 * all) a query string with a NUL.
 */
function invalidRequest(o: Operation, valid: Req): Req {
  const params = o.op.parameters ?? []
  const path = params.find((p) => p.in === 'path')
  if (path) {
    const bad = path.schema.type === 'integer' ? 'not-a-number' : 'nul%00byte'
    const url = o.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
      name === path.name ? bad : (valid.url.split('/')[o.path.split('/').indexOf(`{${name}}`)] ?? 'x'),
    )
    return { ...valid, url }
  }
  if (o.op.requestBody) {
    const schema = Object.values(o.op.requestBody.content)[0]?.schema
    return { ...valid, body: schema?.type === 'array' ? { not: 'an array' } : ['not', 'an', 'object'] }
  }
  const query = params.find((p) => p.in === 'query')
  if (query) {
    const bad = query.schema.type === 'integer' || query.schema.type === 'boolean' ? 'x1' : '%00'
    return { ...valid, url: `${o.path}?${query.name}=${bad}` }
  }
  return { ...valid, url: `${valid.url}${valid.url.includes('?') ? '&' : '?'}q=%00` }
}

const pgOk = await postgresAvailable()
const backends: Backend[] = pgOk ? ['pglite', 'postgres'] : ['pglite']

describe('the served OpenAPI document, walked over HTTP', () => {
  let history: ComputedHistory
  const apis = new Map<Backend, TestApi>()

  beforeAll(async () => {
    history = await computedHistory({
      backends,
      before: 2,
      after: 3,
      walletCount: 12,
      simulator: { behavior: { redeem: 0.3 } },
      onboard: async (db, _backend, devnet) => {
        const holder = devnet.simulator
          .state()
          .wallets.find((w) => w.shares > 0n)
          ?.address.toLowerCase()
        if (!holder) throw new Error('the devnet has no holder')
        const org = await createRepos(db).orgs.create({ name: 'walker', canAllowlist: true })
        const platform = createPlatformService(db)
        await platform.createAccount(org.id, 'walk-account', 'test')
        await platform.createWallet(
          org,
          'walk-account',
          { address: holder, type: 'ETH', allowlisted: false },
          'test',
        )
      },
    })
    for (const [backend, dbh] of history.databases) {
      apis.set(
        backend,
        await startTestApi(backend, { DATA_DIR: history.dataDir, RATE_LIMIT_MAX: '100000' }, { dbh }),
      )
    }
  })
  afterAll(async () => {
    for (const api of apis.values()) await api.close()
    await history?.close()
  })

  describe.each(backends)('%s', (backend) => {
    test('behavior: every route of the interface is in the document', async () => {
      const api = apis.get(backend) as TestApi
      const res = await api.app.inject({ method: 'GET', url: '/docs/json' })
      const paths = res.json().paths as Record<string, Record<string, unknown>>
      const served = Object.entries(paths).flatMap(([p, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
      )
      expect(INTERFACE_ROUTES.filter((r) => !served.includes(r))).toEqual([])
      // paths the interface names (prefixes such as "/eth/v1" in its prose excepted)
      const named = seedPaths().filter((p) => !Object.keys(paths).some((s) => s.startsWith(`${p}/`)))
      if (fs.existsSync(SEED)) expect(named.length).toBeGreaterThan(0)
      expect(named.filter((p) => !(p in paths))).toEqual([])
    })

    test('behavior: every operation answers a valid request 2xx and an invalid one 4xx in the catalog shape', async () => {
      const api = apis.get(backend) as TestApi
      const db = api.dbh.db
      const doc = (await http(api.url)('GET', '/docs/json')).body as {
        paths: Record<string, Record<string, Operation['op']>>
      }
      const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
      )
      expect(operations.length).toBeGreaterThanOrEqual(INTERFACE_ROUTES.length)

      // the walker's organization (onboarded before the history was computed) and a token with every scope
      const orgRow = await db('orgs').where({ name: 'walker' }).first()
      const repos = createRepos(db)
      const { createClient } = await import('../cli/admin.ts')
      const client = await createClient(db, { orgId: orgRow.id, scopes: ALL_SCOPES })
      const token = await clientToken(api.url, client)
      const call = http(api.url, token)
      const anon = http(api.url)
      const account = await repos.accounts.findByIdOrKey(orgRow.id, 'walk-account')
      if (!account) throw new Error('walk-account missing')
      const [wallet] = await repos.wallets.listByAccounts([account.id])
      if (!wallet) throw new Error('walk wallet missing')
      const dates = (
        await db('days')
          .where({ status: 'computed' })
          .orderBy('date')
          .select(db.raw("to_char(date, 'YYYY-MM-DD') as d"))
      ).map((r: { d: string }) => r.d)
      const [first, last] = [dates[0] as string, dates[dates.length - 1] as string]
      const redeem = await db('redeem_requests').orderBy('request_id').first('request_id', 'recipient')
      expect(redeem, 'the devnet history has a redeem request').toBeDefined()
      const idx = String(redeem.request_id)

      let seq = 0
      // addresses that look like addresses (they end up in the document's examples)
      const walkAddress = (label: string) =>
        `0x${createHash('sha256').update(`walk-${backend}-${label}`).digest('hex').slice(0, 40)}`
      const fresh = async () => {
        seq += 1
        const key = `walk-${backend}-${seq}`
        const created = await call('POST', '/v0/platform/accounts', { key })
        expect(created.status).toBe(201)
        const address = walkAddress(`wallet-${seq}`)
        const w = await call('POST', `/v0/platform/accounts/${key}/wallets`, {
          address,
          type: 'ETH',
          allowlisted: false,
        })
        expect(w.status).toBe(200)
        return { key, address }
      }
      const walletAction = (prefix: string, action: string) => async (): Promise<Req> => {
        const f = await fresh()
        return { url: `${prefix}/${f.key}/wallets/${f.address}/${action}` }
      }
      const webhook = async (): Promise<string> => {
        const res = await call('POST', '/v1/webhooks', {
          url: 'https://93.184.215.14/hook',
          events: ['day.finalized'],
        })
        expect(res.status).toBe(201)
        return res.body.id
      }
      // an export built by its job's processor (the walk runs no runner)
      let exportId: string | undefined
      const completedExport = async (): Promise<string> => {
        if (exportId) return exportId
        const res = await call('POST', '/v1/exports', { from: first, to: last, kind: 'records' })
        expect(res.status).toBe(202)
        const build = createExportJobs({
          db,
          logger: createLogger({ level: 'silent' }),
          runner: () => {
            throw new Error('no runner')
          },
        })[EXPORT_JOBS.build] as Processor
        await build({
          id: 'walk',
          name: EXPORT_JOBS.build,
          data: { exportId: res.body.id },
          attemptsMade: 0,
          attempts: 1,
        })
        exportId = res.body.id as string
        return exportId
      }
      const accountAction = (action: string) => async (): Promise<Req> => ({
        url: `/v0/platform/accounts/${(await fresh()).key}/${action}`,
      })

      const VALID: Record<string, () => Promise<Req>> = {
        'GET /health': async () => ({ url: '/health' }),
        'GET /ready': async () => ({ url: '/ready' }),
        'POST /oauth/token': async () => ({
          url: '/oauth/token',
          token: false,
          body: {
            grant_type: 'client_credentials',
            audience: api.url,
            client_id: client.client_id,
            client_secret: client.client_secret,
          },
        }),
        'GET /.well-known/jwks.json': async () => ({ url: '/.well-known/jwks.json' }),
        'POST /v0/platform/accounts': async () => ({
          url: '/v0/platform/accounts',
          body: { key: `walk-new-${backend}` },
        }),
        'GET /v0/platform/accounts': async () => ({ url: '/v0/platform/accounts' }),
        'GET /v0/platform/accounts/{idOrKey}': async () => ({ url: '/v0/platform/accounts/walk-account' }),
        'PATCH /v0/platform/accounts/{idOrKey}/pause': accountAction('pause'),
        'PATCH /v0/platform/accounts/{idOrKey}/remove': accountAction('remove'),
        'PATCH /v0/platform/accounts/{idOrKey}/reactivate': accountAction('reactivate'),
        'POST /v0/platform/accounts/{idOrKey}/discount_rate': async () => ({
          url: `/v0/platform/accounts/${(await fresh()).key}/discount_rate`,
          body: { target_fee_rate: '0.05' },
        }),
        'GET /v0/platform/accounts/{idOrKey}/discount_rate': async () => {
          const { key } = await fresh()
          const set = await call('POST', `/v0/platform/accounts/${key}/discount_rate`, {
            target_fee_rate: '0.08',
          })
          expect(set.status).toBe(200)
          return { url: `/v0/platform/accounts/${key}/discount_rate` }
        },
        'GET /v0/platform/wallets/{idOrAddress}': async () => ({
          url: `/v0/platform/wallets/${wallet.address}`,
        }),
        'GET /v0/platform/wallets': async () => ({
          url: '/v0/platform/wallets?limit=10&offset=0&on_platform=true',
        }),
        'POST /v0/platform/accounts/{idOrKey}/wallets': async () => {
          const f = await fresh()
          return {
            url: `/v0/platform/accounts/${f.key}/wallets`,
            body: {
              address: walkAddress(`new-wallet-${seq}`),
              type: 'ETH',
              allowlisted: 'false',
            },
          }
        },
        'GET /v0/platform/accounts/{idOrKey}/wallets': async () => ({
          url: '/v0/platform/accounts/walk-account/wallets',
        }),
        'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/pause': walletAction(
          '/v0/platform/accounts',
          'pause',
        ),
        'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/remove': walletAction(
          '/v0/platform/accounts',
          'remove',
        ),
        'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/reactivate': walletAction(
          '/v0/platform/accounts',
          'reactivate',
        ),
        'PATCH /v0/depositors/{idOrKey}/wallets/{idOrAddress}/remove': walletAction(
          '/v0/depositors',
          'remove',
        ),
        'GET /sol/v0/allowlist/{address}': async () => ({ url: `/sol/v0/allowlist/${SOL_SYSTEM}` }),
        'POST /sol/v0/allowlist': async () => ({
          url: '/sol/v0/allowlist',
          body: { address: SOL_SYSTEM, permissions: { staking: true, redemption: false } },
        }),
        'GET /eth/v1/redeems': async () => ({ url: `/eth/v1/redeems?ids=${idx}&display_eth=false` }),
        'GET /eth/v1/redeems/{idx}': async () => ({ url: `/eth/v1/redeems/${idx}` }),
        'GET /eth/v1/redeems/{idx}/projection': async () => ({ url: `/eth/v1/redeems/${idx}/projection` }),
        'GET /eth/v1/redeems_info': async () => ({ url: '/eth/v1/redeems_info' }),
        'GET /eth/v1/redeems_info/projection': async () => ({ url: '/eth/v1/redeems_info/projection' }),
        'GET /eth/v1/validators/queue': async () => ({ url: '/eth/v1/validators/queue' }),
        'GET /eth/v0/redeems': async () => ({ url: `/eth/v0/redeems?owner=${redeem.recipient}` }),
        'GET /eth/v0/redeems/{idx}': async () => ({ url: `/eth/v0/redeems/${idx}` }),
        'GET /eth/v0/redeems/{idx}/projection': async () => ({ url: `/eth/v0/redeems/${idx}/projection` }),
        'GET /eth/v0/redeems_info': async () => ({ url: '/eth/v0/redeems_info' }),
        'GET /eth/v0/redeems_info/projection': async () => ({ url: '/eth/v0/redeems_info/projection' }),
        'POST /eth/v1/rewards': async () => ({
          url: '/eth/v1/rewards',
          body: [{ balance: '1.5', from: first, to: last }],
        }),
        'POST /eth/v1/rewards/wallets': async () => ({
          url: '/eth/v1/rewards/wallets',
          body: { addresses: [wallet.address], date: last },
        }),
        'POST /eth/v1/rewards/accounts': async () => ({
          url: '/eth/v1/rewards/accounts',
          body: { accounts: ['walk-account'], date: last },
        }),
        'POST /eth/v0/rewards/accounts': async () => ({
          url: '/eth/v0/rewards/accounts',
          body: { accounts: [account.id], date: last, unit: 'eth' },
        }),
        'GET /eth/v1/rewards/accounts/{idOrKey}/summary': async () => ({
          url: `/eth/v1/rewards/accounts/walk-account/summary?from=${first}&to=${last}`,
        }),
        'GET /eth/v1/rewards/wallets/{idOrKey}/summary': async () => ({
          url: `/eth/v1/rewards/wallets/${wallet.address}/summary?from=${first}&to=${last}`,
        }),
        'GET /eth/v0/rewards/accounts/{idOrKey}/summary': async () => ({
          url: `/eth/v0/rewards/accounts/${account.id}/summary?to=${last}&unit=eth`,
        }),
        'GET /eth/v0/rewards/wallets/{idOrKey}/summary': async () => ({
          url: `/eth/v0/rewards/wallets/${wallet.id}/summary?from=${first}`,
        }),
        'GET /eth/v1/rewards/organization/summary': async () => ({
          url: `/eth/v1/rewards/organization/summary?from=${first}&to=${last}&group_by=month&currency=usd`,
        }),
        'GET /eth/v0/rewards/organization/summary': async () => ({
          url: `/eth/v0/rewards/organization/summary?to=${last}&unit=eth`,
        }),
        'GET /eth/v1/platforms/{date}': async () => ({
          url: `/eth/v1/platforms/${last}`,
          headers: { 'impersonate-org': orgRow.id },
        }),
        'GET /eth/v1/originators/{date}': async () => ({ url: `/eth/v1/originators/${last}?currency=eur` }),
        'GET /eth/v1/operators/{date}': async () => ({ url: `/eth/v1/operators/${last}` }),
        'GET /eth/v0/platforms/{date}': async () => ({ url: `/eth/v0/platforms/${last}` }),
        'GET /eth/v0/operators/{date}': async () => ({ url: `/eth/v0/operators/${last}` }),
        'GET /eth/v0/protocol/{date}': async () => ({ url: `/eth/v0/protocol/${last}?currency=usd` }),
        'GET /v1/reports/{date}/versions': async () => ({ url: `/v1/reports/${last}/versions` }),
        'GET /v1/admin/days': async () => ({ url: `/v1/admin/days?from=${first}&to=${last}` }),
        // without recompute: the computed days stay as they are for the operations walked after it
        'POST /v1/admin/backfill': async () => ({
          url: '/v1/admin/backfill',
          body: { from: first, to: last },
        }),
        'POST /v1/webhooks': async () => ({
          url: '/v1/webhooks',
          body: { url: 'https://93.184.215.14/hook', events: ['day.finalized'] },
        }),
        'GET /v1/webhooks': async () => ({ url: '/v1/webhooks' }),
        'GET /v1/webhooks/{id}': async () => ({ url: `/v1/webhooks/${await webhook()}` }),
        'DELETE /v1/webhooks/{id}': async () => ({ url: `/v1/webhooks/${await webhook()}` }),
        'POST /v1/webhooks/{id}/resume': async () => ({ url: `/v1/webhooks/${await webhook()}/resume` }),
        'GET /v1/webhooks/{id}/deliveries': async () => {
          const id = await webhook()
          await repos.webhooks.emit({ type: 'day.finalized', factKey: `walk:${id}`, orgId: null, data: {} })
          return { url: `/v1/webhooks/${id}/deliveries?limit=10&offset=0` }
        },
        'POST /v1/exports': async () => ({
          url: '/v1/exports',
          body: { from: first, to: last, kind: 'journal', granularity: 'month', currency: 'usd' },
        }),
        'GET /v1/exports/{id}': async () => ({ url: `/v1/exports/${await completedExport()}` }),
        'GET /v1/exports/{id}/download': async () => {
          const shown = await call('GET', `/v1/exports/${await completedExport()}`)
          return { url: shown.body.download_url, token: false }
        },
        'POST /v1/webhooks/{id}/deliveries/{deliveryId}/replay': async () => {
          const id = await webhook()
          await repos.webhooks.emit({ type: 'day.finalized', factKey: `walk:${id}`, orgId: null, data: {} })
          const delivery = await db('webhook_deliveries').where({ webhook_id: id }).first('id')
          return { url: `/v1/webhooks/${id}/deliveries/${delivery.id}/replay` }
        },
      }

      const walked = operations.map((o) => `${o.method} ${o.path}`)
      expect(
        walked.filter((k) => !(k in VALID)),
        'operations without a valid request in VALID',
      ).toEqual([])
      expect(
        Object.keys(VALID).filter((k) => !walked.includes(k)),
        'VALID entries not in the document',
      ).toEqual([])

      const examples: Record<string, Record<string, unknown>> = {}
      for (const o of operations) {
        const key = `${o.method} ${o.path}`
        const valid = await (VALID[key] as () => Promise<Req>)()
        const send = valid.token === false ? anon : call
        const ok = await send(o.method, valid.url, valid.body, valid.headers)
        expect(ok.status, `${key} valid: ${JSON.stringify(ok.body)?.slice(0, 300)}`).toBeGreaterThanOrEqual(
          200,
        )
        expect(ok.status, `${key} valid: ${JSON.stringify(ok.body)?.slice(0, 300)}`).toBeLessThan(300)
        if (ok.headers.get('content-type')?.startsWith('application/json')) {
          examples[key] = { [ok.status]: ok.body }
        }
        // an answer also documented as CSV is asked for as CSV too (held to the document like any other)
        if (o.op.responses?.[ok.status]?.content?.['text/csv']) {
          const csv = await send(o.method, valid.url, valid.body, { ...valid.headers, accept: 'text/csv' })
          expect([csv.status, csv.headers.get('content-type')], `${key} as CSV`).toEqual([
            ok.status,
            expect.stringMatching(/^text\/csv/),
          ])
          examples[key] = { ...examples[key], [`${ok.status} text/csv`]: csvExample(csv.body) }
        }

        const invalid = invalidRequest(o, valid)
        const bad = await send(o.method, invalid.url, invalid.body, invalid.headers)
        const label = `${key} invalid (${invalid.url} ${JSON.stringify(invalid.body) ?? ''})`
        expect(bad.status, `${label}: ${JSON.stringify(bad.body)}`).toBeGreaterThanOrEqual(400)
        expect(bad.status, `${label}: ${JSON.stringify(bad.body)}`).toBeLessThan(500)
        if (key === 'POST /oauth/token') {
          expect(bad.body).toMatchObject({ error: 'invalid_request' })
          const { error: _e, error_description: _d, ...rest } = bad.body
          expectCatalogBody(label, bad.status, rest)
        } else {
          expectCatalogBody(label, bad.status, bad.body)
        }

        // an authenticated operation (documented with a `security` requirement) refuses a request without a
        // token; a public one says `security: []`
        if (o.op.security?.length) {
          const res = await anon(o.method, valid.url, valid.body, valid.headers)
          expect(res.status, `${key} without a token`).toBe(401)
          expectCatalogBody(`${key} without a token`, 401, res.body)
        }
      }
      if (WRITING_EXAMPLES && backend === backends[0]) writeAnswerExamples(examples)
    })
  })
})
