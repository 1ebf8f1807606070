import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  IMPERSONATION_REFUSED,
  ImpersonateHeaders,
  registerImpersonation,
} from '../api/auth/impersonation.ts'
import { registerErrorHandlers } from '../api/plugins/error-handlers.ts'
import { createClient, createOrg, delegateOrg } from '../cli/admin.ts'
import type { DbHandle } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { clientToken, startTestApi, type TestApi } from './helpers/api.ts'
import { seedRewardsDay } from './helpers/rewards-day.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

/**
 * `Impersonate-Org` sent to every operation of the served OpenAPI document (issue 36, item 3): each one either
 * honours it (the answer is the named organization's, its write lands in that organization, one audit row
 * names both organizations) or refuses it (400 IR2009), as docs/interface.md "Impersonate-Org" says; none
 * ignores it. In process (app.inject) on one Postgres database with a computed synthetic day.
 */

const ALL_SCOPES =
  'read:platform write:platform read:sol-allowlist write:sol-allowlist read:eth-rewards read:eth-redeems impersonate:org admin'
const OWN_SCOPES =
  'read:platform write:platform read:sol-allowlist write:sol-allowlist read:eth-rewards read:eth-redeems admin'
const UNKNOWN_ORG = 'org_00000000000000000000000000000000'
const SOL_SYSTEM = '11111111111111111111111111111111'

/**
 * The operations that honour the header (docs/interface.md): those whose answer or effect is an
 * organization's. Every other operation refuses it.
 */
const HONOURED = [
  'POST /v0/platform/accounts',
  'GET /v0/platform/accounts',
  'GET /v0/platform/accounts/{idOrKey}',
  'PATCH /v0/platform/accounts/{idOrKey}/pause',
  'PATCH /v0/platform/accounts/{idOrKey}/remove',
  'PATCH /v0/platform/accounts/{idOrKey}/reactivate',
  'POST /v0/platform/accounts/{idOrKey}/discount_rate',
  'GET /v0/platform/accounts/{idOrKey}/discount_rate',
  'GET /v0/platform/wallets/{idOrAddress}',
  'GET /v0/platform/wallets',
  'POST /v0/platform/accounts/{idOrKey}/wallets',
  'GET /v0/platform/accounts/{idOrKey}/wallets',
  'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/pause',
  'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/remove',
  'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/reactivate',
  'PATCH /v0/depositors/{idOrKey}/wallets/{idOrAddress}/remove',
  'POST /sol/v0/allowlist',
  'POST /eth/v1/rewards/accounts',
  'POST /eth/v1/rewards/wallets',
  'GET /eth/v1/rewards/accounts/{idOrKey}/summary',
  'GET /eth/v1/rewards/wallets/{idOrKey}/summary',
  'GET /eth/v1/rewards/organization/summary',
  'GET /eth/v1/platforms/{date}',
  'GET /eth/v1/originators/{date}',
  'POST /eth/v0/rewards/accounts',
  'GET /eth/v0/rewards/accounts/{idOrKey}/summary',
  'GET /eth/v0/rewards/wallets/{idOrKey}/summary',
  'GET /eth/v0/rewards/organization/summary',
  'GET /eth/v0/platforms/{date}',
  'POST /v1/webhooks',
  'GET /v1/webhooks',
  'GET /v1/webhooks/{id}',
  'DELETE /v1/webhooks/{id}',
  'POST /v1/webhooks/{id}/resume',
  'GET /v1/webhooks/{id}/deliveries',
  'POST /v1/webhooks/{id}/deliveries/{deliveryId}/replay',
  'POST /v1/exports',
  'GET /v1/exports/{id}',
].sort()

/** Routes the document hides: refused like any other that does not declare the header. */
const HIDDEN = ['GET /metrics', 'GET /docs', 'GET /docs/json']

interface Operation {
  parameters?: { in: string; name: string }[]
  security?: unknown[]
}

/**
 * An honoured operation's request against the target organization's data: a read (answered as the target
 * answers itself, and otherwise to the caller alone), or a write whose effect `landed` checks in the database
 * (`foreign: true`: the same request in the caller's own name answers 404, the resource being the target's).
 */
interface Honoured {
  url: string
  body?: unknown
  write?: { foreign?: boolean; landed?: () => Promise<void> }
}

type Reply = { status: number; body: ReturnType<typeof JSON.parse>; headers: Record<string, unknown> }

const pgOk = await postgresAvailable()

describe.runIf(pgOk)('Impersonate-Org on every route of the OpenAPI document', () => {
  let dbh: DbHandle & { url: string }
  let api: TestApi
  let target: string
  let delegate: string
  let foreign: string
  let tokens: { target: string; delegate: string; unscoped: string }
  let seeded: Awaited<ReturnType<typeof seedRewardsDay>>

  beforeAll(async () => {
    dbh = await migratedTestDatabase()
    seeded = await seedRewardsDay(dbh.db, { holders: 300, sample: 20 })
    api = await startTestApi('postgres', { RATE_LIMIT_MAX: '100000' }, { dbh })
    const db = dbh.db
    // T: a platform with accounts, wallets and records; D: an onboarding desk T named its delegate; F: a
    // foreign organization that named nobody
    target = seeded.orgId
    delegate = (await createOrg(db, { name: 'Onboarding desk', canAllowlist: true })).id
    foreign = (await createOrg(db, { name: 'Foreign', canAllowlist: true })).id
    await delegateOrg(db, { orgId: target, delegateOrgId: delegate })
    const token = async (orgId: string, scopes: string) =>
      clientToken(api.url, await createClient(db, { orgId, scopes }))
    tokens = {
      target: await token(target, OWN_SCOPES),
      delegate: await token(delegate, ALL_SCOPES),
      unscoped: await token(delegate, OWN_SCOPES),
    }
  }, 120_000)
  afterAll(async () => {
    await api?.close()
    await dbh?.close()
  })

  const send = async (
    method: string,
    url: string,
    options: { token?: string | undefined; body?: unknown; as?: string } = {},
  ): Promise<Reply> => {
    const res = await api.app.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        ...(options.as === undefined ? {} : { 'impersonate-org': options.as }),
      },
      ...(options.body === undefined ? {} : { payload: options.body as object }),
    })
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers }
  }
  const auditRows = () => dbh.db('impersonations').orderBy('id')

  test('behavior: every operation honours Impersonate-Org (as the target, audited) or refuses it (400 IR2009); none ignores it', async () => {
    const db = dbh.db
    const repos = createRepos(db)
    const docRes = await api.app.inject({ method: 'GET', url: '/docs/json' })
    const paths = docRes.json().paths as Record<string, Record<string, Operation>>
    const operations = Object.entries(paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, path, op })),
    )
    expect(operations.length).toBeGreaterThan(HONOURED.length)
    // the document states which honour it: the header is a parameter of exactly those
    const documented = operations
      .filter((o) => o.op.parameters?.some((p) => p.in === 'header' && p.name === 'impersonate-org'))
      .map((o) => o.key)
      .sort()
    expect(documented).toEqual(HONOURED)

    // the target's resources
    const as = (body: unknown) => body as Record<string, unknown>
    const accountKey = seeded.accountKey
    const account = (await repos.accounts.findByIdOrKey(target, accountKey)) as { id: string }
    const ownAddress = seeded.ownAddresses[0] as string
    const wallet = (await db('wallets').where({ org_id: target, address: ownAddress }).first()) as {
      id: string
    }
    expect(wallet).toBeDefined()
    const date = seeded.date
    let seq = 0
    const address = () => `0x${randomBytes(20).toString('hex')}`
    const asTarget = (method: string, url: string, body?: unknown) =>
      send(method, url, { token: tokens.target, body })
    const freshAccount = async () => {
      seq += 1
      const key = `imp-${seq}`
      expect((await asTarget('POST', '/v0/platform/accounts', { key })).status).toBe(201)
      return key
    }
    const freshWallet = async () => {
      const key = await freshAccount()
      const addr = address()
      const res = await asTarget('POST', `/v0/platform/accounts/${key}/wallets`, {
        address: addr,
        type: 'ETH',
        allowlisted: false,
      })
      expect(res.status).toBe(200)
      return { key, addr }
    }
    const freshWebhook = async () => {
      const res = await asTarget('POST', '/v1/webhooks', {
        url: 'https://93.184.215.14/hook',
        events: ['day.finalized'],
      })
      expect(res.status).toBe(201)
      return res.body.id as string
    }
    const webhookWithDelivery = async () => {
      const id = await freshWebhook()
      await repos.webhooks.emit({ type: 'day.finalized', factKey: `imp:${id}`, orgId: null, data: {} })
      const delivery = await db('webhook_deliveries').where({ webhook_id: id }).first('id')
      return { id, delivery: delivery.id as string }
    }
    const walletAction = (prefix: string, action: string) => async (): Promise<Honoured> => {
      const { key, addr } = await freshWallet()
      return { url: `${prefix}/${key}/wallets/${addr}/${action}`, write: { foreign: true } }
    }
    const accountAction = (action: string) => async (): Promise<Honoured> => ({
      url: `/v0/platform/accounts/${await freshAccount()}/${action}`,
      write: { foreign: true },
    })
    const ownedBy = async (table: string, where: Record<string, unknown>) => {
      const rows = await db(table).where(where).select('org_id')
      expect(rows.map((r: { org_id: string }) => r.org_id)).toEqual([target])
    }

    const HONOURED_REQUESTS: Record<string, () => Promise<Honoured>> = {
      'POST /v0/platform/accounts': async () => {
        const key = `imp-created-${++seq}`
        return {
          url: '/v0/platform/accounts',
          body: { key },
          write: { landed: () => ownedBy('accounts', { key }) },
        }
      },
      'GET /v0/platform/accounts': async () => ({ url: '/v0/platform/accounts?limit=5' }),
      'GET /v0/platform/accounts/{idOrKey}': async () => ({ url: `/v0/platform/accounts/${accountKey}` }),
      'PATCH /v0/platform/accounts/{idOrKey}/pause': accountAction('pause'),
      'PATCH /v0/platform/accounts/{idOrKey}/remove': accountAction('remove'),
      'PATCH /v0/platform/accounts/{idOrKey}/reactivate': accountAction('reactivate'),
      'POST /v0/platform/accounts/{idOrKey}/discount_rate': async () => {
        const key = await freshAccount()
        const id = ((await repos.accounts.findByIdOrKey(target, key)) as { id: string }).id
        return {
          url: `/v0/platform/accounts/${key}/discount_rate`,
          body: { target_fee_rate: '0.05' },
          write: {
            foreign: true,
            landed: async () => expect(await repos.reports.discountHistory(id)).toHaveLength(1),
          },
        }
      },
      'GET /v0/platform/accounts/{idOrKey}/discount_rate': async () => {
        const key = await freshAccount()
        const set = await asTarget('POST', `/v0/platform/accounts/${key}/discount_rate`, {
          target_fee_rate: '0.08',
        })
        expect(set.status).toBe(200)
        return { url: `/v0/platform/accounts/${key}/discount_rate` }
      },
      'GET /v0/platform/wallets/{idOrAddress}': async () => ({ url: `/v0/platform/wallets/${ownAddress}` }),
      'GET /v0/platform/wallets': async () => ({ url: '/v0/platform/wallets?limit=5' }),
      'POST /v0/platform/accounts/{idOrKey}/wallets': async () => {
        const key = await freshAccount()
        const addr = address()
        return {
          url: `/v0/platform/accounts/${key}/wallets`,
          body: { address: addr, type: 'ETH', allowlisted: false },
          write: {
            foreign: true,
            landed: async () => {
              // the wallet is the target's, and so are the fees it earns (its originator)
              const row = await db('wallets').where({ address: addr }).first('org_id', 'originator_org_id')
              expect(row).toEqual({ org_id: target, originator_org_id: target })
            },
          },
        }
      },
      'GET /v0/platform/accounts/{idOrKey}/wallets': async () => ({
        url: `/v0/platform/accounts/${accountKey}/wallets?limit=5`,
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
      'PATCH /v0/depositors/{idOrKey}/wallets/{idOrAddress}/remove': walletAction('/v0/depositors', 'remove'),
      'POST /sol/v0/allowlist': async () => ({
        url: '/sol/v0/allowlist',
        body: { address: SOL_SYSTEM, permissions: { staking: true, redemption: false } },
        write: { landed: () => ownedBy('sol_allowlist', { address: SOL_SYSTEM }) },
      }),
      'POST /eth/v1/rewards/accounts': async () => ({
        url: '/eth/v1/rewards/accounts',
        body: { accounts: [accountKey], date },
      }),
      'POST /eth/v1/rewards/wallets': async () => ({
        url: '/eth/v1/rewards/wallets',
        body: { addresses: [ownAddress], date },
      }),
      'GET /eth/v1/rewards/accounts/{idOrKey}/summary': async () => ({
        url: `/eth/v1/rewards/accounts/${accountKey}/summary?to=${date}`,
      }),
      'GET /eth/v1/rewards/wallets/{idOrKey}/summary': async () => ({
        url: `/eth/v1/rewards/wallets/${ownAddress}/summary?to=${date}`,
      }),
      'GET /eth/v1/rewards/organization/summary': async () => ({
        url: `/eth/v1/rewards/organization/summary?to=${date}`,
      }),
      'GET /eth/v1/platforms/{date}': async () => ({ url: `/eth/v1/platforms/${date}` }),
      'GET /eth/v1/originators/{date}': async () => ({ url: `/eth/v1/originators/${date}` }),
      'POST /eth/v0/rewards/accounts': async () => ({
        url: '/eth/v0/rewards/accounts',
        body: { accounts: [account.id], date, unit: 'eth' },
      }),
      'GET /eth/v0/rewards/accounts/{idOrKey}/summary': async () => ({
        url: `/eth/v0/rewards/accounts/${account.id}/summary?to=${date}`,
      }),
      'GET /eth/v0/rewards/wallets/{idOrKey}/summary': async () => ({
        url: `/eth/v0/rewards/wallets/${wallet.id}/summary?to=${date}`,
      }),
      'GET /eth/v0/rewards/organization/summary': async () => ({
        url: `/eth/v0/rewards/organization/summary?to=${date}&group_by=month`,
      }),
      'GET /eth/v0/platforms/{date}': async () => ({ url: `/eth/v0/platforms/${date}` }),
      'POST /v1/webhooks': async () => {
        const url = `https://93.184.215.14/hook-${++seq}`
        return {
          url: '/v1/webhooks',
          body: { url, events: ['day.finalized'] },
          write: { landed: () => ownedBy('webhooks', { url }) },
        }
      },
      'GET /v1/webhooks': async () => {
        await freshWebhook()
        return { url: '/v1/webhooks' }
      },
      'GET /v1/webhooks/{id}': async () => ({ url: `/v1/webhooks/${await freshWebhook()}` }),
      'DELETE /v1/webhooks/{id}': async () => ({
        url: `/v1/webhooks/${await freshWebhook()}`,
        write: { foreign: true },
      }),
      'POST /v1/webhooks/{id}/resume': async () => ({
        url: `/v1/webhooks/${await freshWebhook()}/resume`,
        write: { foreign: true },
      }),
      'GET /v1/webhooks/{id}/deliveries': async () => ({
        url: `/v1/webhooks/${(await webhookWithDelivery()).id}/deliveries`,
      }),
      'POST /v1/exports': async () => ({
        url: '/v1/exports',
        body: { from: date, to: date, kind: 'records' },
        // every export stored is the target's (the GET below asks for its own as the target too)
        write: {
          landed: async () => {
            const owners = new Set((await db('exports').select('org_id')).map((r) => r.org_id))
            expect([...owners]).toEqual([target])
          },
        },
      }),
      'GET /v1/exports/{id}': async () => {
        const res = await asTarget('POST', '/v1/exports', { from: date, to: date, kind: 'records' })
        expect(res.status, JSON.stringify(res.body)).toBe(202)
        return { url: `/v1/exports/${res.body.id}` }
      },
      'POST /v1/webhooks/{id}/deliveries/{deliveryId}/replay': async () => {
        const { id, delivery } = await webhookWithDelivery()
        return { url: `/v1/webhooks/${id}/deliveries/${delivery}/replay`, write: { foreign: true } }
      },
    }
    expect(Object.keys(HONOURED_REQUESTS).sort()).toEqual(HONOURED)

    const fastifyRoute = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1')
    for (const { key, path, op } of operations) {
      const method = key.split(' ')[0] as string
      if (!HONOURED.includes(key)) {
        await expectRefused(method, path.replace(/\{[^}]+\}/g, 'x'), op)
        continue
      }
      const req = await (HONOURED_REQUESTS[key] as () => Promise<Honoured>)()
      const before = (await auditRows()).length

      // refused like a read: an unknown and a foreign organization alike (403 IR2008), and without the scope
      for (const org of [UNKNOWN_ORG, foreign]) {
        const res = await send(method, req.url, { token: tokens.delegate, body: req.body, as: org })
        expect([res.status, res.body], `${key} as ${org}`).toEqual([
          403,
          { message: IMPERSONATION_REFUSED, status: 'IR2008' },
        ])
      }
      const unscoped = await send(method, req.url, { token: tokens.unscoped, body: req.body, as: target })
      expect([unscoped.status, as(unscoped.body).status], `${key} without the scope`).toEqual([403, 'IR2003'])
      expect((await auditRows()).length, `${key}: refusals leave no audit row`).toBe(before)

      if (req.write?.foreign) {
        // the resource is the target's: in the caller's own name it does not exist
        const own = await send(method, req.url, { token: tokens.delegate, body: req.body })
        expect(own.status, `${key} in the delegate's own name`).toBe(404)
      }
      const honoured = await send(method, req.url, { token: tokens.delegate, body: req.body, as: target })
      expect(
        honoured.status,
        `${key} as the target: ${JSON.stringify(honoured.body)}`,
      ).toBeGreaterThanOrEqual(200)
      expect(honoured.status, `${key} as the target: ${JSON.stringify(honoured.body)}`).toBeLessThan(300)
      if (req.write) {
        await req.write.landed?.()
      } else {
        // a read answers what the target reads itself, and not what the caller reads in its own name
        const itself = await asTarget(method, req.url, req.body)
        expect([honoured.status, honoured.body], `${key}: the target's own answer`).toEqual([
          itself.status,
          itself.body,
        ])
        const own = await send(method, req.url, { token: tokens.delegate, body: req.body })
        expect([own.status, own.body], `${key}: the delegate's own answer differs`).not.toEqual([
          itself.status,
          itself.body,
        ])
      }
      const rows = await auditRows()
      expect(rows.length, `${key}: one audit row`).toBe(before + 1)
      expect(rows.at(-1), `${key}: the audit row`).toMatchObject({
        org_id: delegate,
        target_org_id: target,
        method,
        route: fastifyRoute(path),
        request_id: honoured.headers['x-request-id'],
      })
    }
    for (const key of HIDDEN) {
      const [method, path] = key.split(' ') as [string, string]
      await expectRefused(method, path, { security: [] })
    }
  }, 60_000)

  /** Refused with 400 IR2009 naming the header, with a token holding every scope and without one; unaudited. */
  async function expectRefused(method: string, url: string, op: Operation) {
    const before = (await auditRows()).length
    const callers = op.security?.length ? [tokens.delegate, undefined] : [undefined, tokens.delegate]
    for (const token of callers) {
      const res = await send(method, url, { token, as: target })
      const label = `${method} ${url} ${token ? 'with' : 'without'} a token`
      expect(res.status, label).toBe(400)
      expect(res.body.status, label).toBe('IR2009')
      expect(res.body.message, label).toMatch(/^Impersonate-Org does not apply to /)
    }
    expect((await auditRows()).length, `${method} ${url}: no audit row`).toBe(before)
  }

  test('behavior: a write honoured for another organization creates the resource there and leaves an audit row naming both', async () => {
    const key = 'onboarded-by-the-desk'
    const addr = `0x${randomBytes(20).toString('hex')}`
    const account = await send('POST', '/v0/platform/accounts', {
      token: tokens.delegate,
      as: target,
      body: { key },
    })
    expect(account.status).toBe(201)
    const wallet = await send('POST', `/v0/platform/accounts/${key}/wallets`, {
      token: tokens.delegate,
      as: target,
      body: { address: addr, type: 'ETH', allowlisted: false },
    })
    expect(wallet.status).toBe(200)
    // the target reads them as its own; the delegate's own organization has neither
    const read = await send('GET', `/v0/platform/wallets/${addr}`, { token: tokens.target })
    expect([read.status, read.body.id]).toEqual([200, wallet.body.id])
    expect((await send('GET', `/v0/platform/accounts/${key}`, { token: tokens.delegate })).status).toBe(404)
    expect(await dbh.db('accounts').where({ key }).select('org_id')).toEqual([{ org_id: target }])
    const rows = await dbh
      .db('impersonations')
      .whereIn('request_id', [
        account.headers['x-request-id'] as string,
        wallet.headers['x-request-id'] as string,
      ])
    expect(rows.map((r) => [r.org_id, r.target_org_id, r.method, r.route]).sort()).toEqual([
      [delegate, target, 'POST', '/v0/platform/accounts'],
      [delegate, target, 'POST', '/v0/platform/accounts/:idOrKey/wallets'],
    ])
    // the status changes name the delegate's client as the actor
    const changes = await dbh.db('status_changes').where({ entity: 'account', entity_id: account.body.id })
    expect(changes).toHaveLength(1)
    const client = await dbh
      .db('api_clients')
      .where({ org_id: delegate })
      .whereLike('scopes', '%impersonate%')
      .first()
    expect(changes[0].actor).toBe(client.id)
  })

  test('behavior: a route added later that does not declare the header refuses it (400 IR2009); one that declares it must check a token', async () => {
    const appWith = (register: (app: ReturnType<typeof Fastify>) => void) => {
      const app = Fastify()
      registerErrorHandlers(app)
      registerImpersonation(app, { repos: createRepos(dbh.db) })
      register(app)
      return app
    }
    // declaring the header on a route that checks no bearer token stops the app from starting
    expect(() =>
      appWith((app) =>
        app.get('/later-public', { schema: { headers: ImpersonateHeaders } }, async () => ({ ok: true })),
      ),
    ).toThrow(/GET \/later-public: declares Impersonate-Org but checks no bearer token/)

    const later = appWith((app) => app.get('/later', async () => ({ ok: true })))
    try {
      const plain = await later.inject({ method: 'GET', url: '/later' })
      expect([plain.statusCode, plain.json()]).toEqual([200, { ok: true }])
      const headers = { 'impersonate-org': target }
      const refused = await later.inject({ method: 'GET', url: '/later', headers })
      expect([refused.statusCode, refused.json().status]).toEqual([400, 'IR2009'])
      expect(refused.json().message).toMatch(/^Impersonate-Org does not apply to GET \/later: /)
      // an unknown route stays a 404
      const missing = await later.inject({ method: 'GET', url: '/nope', headers })
      expect([missing.statusCode, missing.json().status]).toEqual([404, 'IR1004'])
    } finally {
      await later.close()
    }
  })
})
