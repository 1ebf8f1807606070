import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createClientAuthenticator, verifySecret } from '../api/auth/secrets.ts'
import { addClientSecret, createClient, createOrg, revokeOldClientSecrets } from '../cli/admin.ts'
import { loadConfig } from '../common/config.ts'
import type { DbHandle } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { http, orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { cliFails, TEST_SIGNING_KEY_SECRET } from './helpers/cli.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()

// Limits for what a tenant can create (common/config.ts `TenantLimits`): webhooks per organization, live API
// clients per organization, live secrets per client; the count and the create are one step under a row lock.
describe('tenant limits: configuration', () => {
  test('behavior: defaults 25 webhooks, 20 clients, 2 secrets; each variable read and bounded', () => {
    expect(loadConfig({}).limits).toEqual({ webhooksPerOrg: 25, clientsPerOrg: 20, secretsPerClient: 2 })
    expect(
      loadConfig({ MAX_WEBHOOKS_PER_ORG: '3', MAX_CLIENTS_PER_ORG: '4', MAX_SECRETS_PER_CLIENT: '5' }).limits,
    ).toEqual({ webhooksPerOrg: 3, clientsPerOrg: 4, secretsPerClient: 5 })
    expect(() => loadConfig({ MAX_SECRETS_PER_CLIENT: '6' })).toThrow(
      /MAX_SECRETS_PER_CLIENT must be between 1 and 5/,
    )
    expect(() => loadConfig({ MAX_WEBHOOKS_PER_ORG: '0' })).toThrow(/MAX_WEBHOOKS_PER_ORG/)
  })
})

describe.runIf(pgOk)('tenant limits on Postgres', () => {
  let api: TestApi
  let dbh: DbHandle & { url: string }
  beforeAll(async () => {
    dbh = await migratedTestDatabase()
    api = await startTestApi('postgres', { MAX_WEBHOOKS_PER_ORG: '4', WEBHOOK_ALLOW_PRIVATE: '1' }, { dbh })
  }, 120_000)
  afterAll(async () => {
    await api?.close()
    await dbh?.close()
  })

  test('behavior: webhooks past MAX_WEBHOOKS_PER_ORG answer 400 IR3700 naming the limit; 12 concurrent creates leave exactly 4', async () => {
    const first = await orgWithToken(api, { name: 'sequential' })
    const post = (token: string, i: number) =>
      http(api.url, token)('POST', '/v1/webhooks', {
        url: `http://127.0.0.1:9/hook-${i}`,
        events: ['day.finalized'],
      })
    for (let i = 0; i < 4; i++) expect((await post(first.token, i)).status).toBe(201)
    const refused = await post(first.token, 4)
    expect(refused.status).toBe(400)
    expect(refused.body).toEqual({
      message: expect.stringMatching(/its limit \(MAX_WEBHOOKS_PER_ORG=4\)/),
      status: 'IR3700',
    })
    // a deleted webhook frees its place
    const list = await http(api.url, first.token)('GET', '/v1/webhooks')
    const gone = await http(api.url, first.token)('DELETE', `/v1/webhooks/${list.body[0].id}`)
    expect(gone.status).toBe(204)
    expect((await post(first.token, 5)).status).toBe(201)

    // concurrent creates of one organization: the organization's row lock lets exactly the limit through
    const racing = await orgWithToken(api, { name: 'racing' })
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => post(racing.token, i)))
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses).toEqual([...Array(4).fill(201), ...Array(8).fill(400)])
    const [stored] = await api.dbh.db('webhooks').where({ org_id: racing.orgId }).count({ n: '*' })
    expect(Number(stored?.n)).toBe(4)
    // another organization has its own budget
    expect((await post(first.token, 6)).status).toBe(400)
  }, 60_000)

  test('behavior: API clients past MAX_CLIENTS_PER_ORG and secrets past MAX_SECRETS_PER_CLIENT are refused, concurrently too; revoking frees a place', async () => {
    const db = api.dbh.db
    const org = await createOrg(db, { name: 'clients', canAllowlist: false })
    const make = () => createClient(db, { orgId: org.id, scopes: 'read:platform' }, { clientsPerOrg: 3 })
    const made = await Promise.allSettled(Array.from({ length: 8 }, make))
    const fulfilled = made.filter((m) => m.status === 'fulfilled')
    const rejected = made.filter((m): m is PromiseRejectedResult => m.status === 'rejected')
    expect([fulfilled.length, rejected.length]).toEqual([3, 5])
    for (const r of rejected) {
      expect(r.reason.message).toMatch(/has 3 live API clients, its limit \(MAX_CLIENTS_PER_ORG=3\)/)
      expect(r.reason.reason).toBe('tenant_limit')
    }
    const [live] = await db('api_clients').where({ org_id: org.id }).count({ n: '*' })
    expect(Number(live?.n)).toBe(3)

    const client = (fulfilled[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof make>>>).value
    const limits = { secretsPerClient: 2 }
    const adds = await Promise.allSettled(
      Array.from({ length: 5 }, () => addClientSecret(db, client.client_id, limits)),
    )
    expect(adds.filter((a) => a.status === 'fulfilled')).toHaveLength(1)
    const secretRefusal = adds.find((a): a is PromiseRejectedResult => a.status === 'rejected')!
    expect(secretRefusal.reason.message).toMatch(/has 2 live secrets, its limit \(MAX_SECRETS_PER_CLIENT=2\)/)
    expect(secretRefusal.reason.message).toContain('lsreport clients revoke-old-secrets')
    const newest = (
      adds.find((a) => a.status === 'fulfilled') as PromiseFulfilledResult<{ client_secret: string }>
    ).value

    // the end of a rotation: the older secret revoked, the newest works, a new one may be added again
    const token = (secret: string) =>
      http(api.url)('POST', '/oauth/token', {
        grant_type: 'client_credentials',
        audience: api.url,
        client_id: client.client_id,
        client_secret: secret,
      })
    expect((await token(client.client_secret)).status).toBe(200)
    expect(await revokeOldClientSecrets(db, client.client_id)).toEqual({
      client_id: client.client_id,
      secrets_revoked: 1,
    })
    expect((await token(client.client_secret)).status).toBe(401)
    expect((await token(newest.client_secret)).status).toBe(200)
    await addClientSecret(db, client.client_id, limits)
  }, 60_000)

  test('behavior: the CLI refuses past the limits with the message and exit code 1', async () => {
    const env = {
      DATA_DIR: api.dataDir,
      DATABASE_URL: dbh.url,
      SIGNING_KEY_SECRET: TEST_SIGNING_KEY_SECRET,
      LOG_LEVEL: 'warn',
      MAX_CLIENTS_PER_ORG: '1',
      MAX_SECRETS_PER_CLIENT: '1',
    }
    const org = await createOrg(api.dbh.db, { name: 'cli limits', canAllowlist: false })
    // the org's one client, made in process; the CLI's own create and add-secret are refused past the limits
    const created = await createClient(api.dbh.db, { orgId: org.id, scopes: 'read:platform' })
    const second = await cliFails(['clients', 'create', '--org', org.id, '--scopes', 'read:platform'], env)
    expect(second.code).toBe(1)
    expect(second.stderr).toMatch(/its limit \(MAX_CLIENTS_PER_ORG=1\)/)
    const secret = await cliFails(['clients', 'add-secret', created.client_id], env)
    expect(secret.code).toBe(1)
    expect(secret.stderr).toMatch(/its limit \(MAX_SECRETS_PER_CLIENT=1\)/)
  }, 120_000)
})

// Client authentication does the same scrypt work whatever the client id: an unknown id, a client with one
// secret and one with two all run `candidates` checks (counted on the verifying function, not timed).
describe.runIf(pgOk)('client secret checks take the same work (scrypt calls counted)', () => {
  let dbh: DbHandle & { url: string }
  beforeAll(async () => {
    dbh = await migratedTestDatabase()
  }, 60_000)
  afterAll(async () => {
    await dbh?.close()
  })

  test('behavior: unknown id, one secret, two secrets, revoked: MAX_SECRETS_PER_CLIENT scrypt runs each', async () => {
    const org = await createOrg(dbh.db, { name: 'timing', canAllowlist: false })
    const one = await createClient(dbh.db, { orgId: org.id, scopes: 'read:platform' })
    const two = await createClient(dbh.db, { orgId: org.id, scopes: 'read:platform' })
    const second = await addClientSecret(dbh.db, two.client_id, { secretsPerClient: 3 })
    const revoked = await createClient(dbh.db, { orgId: org.id, scopes: 'read:platform' })
    await createRepos(dbh.db).clients.revoke(revoked.client_id)
    const repos = createRepos(dbh.db)
    for (const candidates of [2, 3]) {
      let calls = 0
      const authenticate = createClientAuthenticator({
        credentials: (id) => repos.clients.credentials(id),
        candidates,
        verify: (secret, stored) => {
          calls += 1
          return verifySecret(secret, stored)
        },
      })
      const counted = async (id: string, secret: string) => {
        calls = 0
        const client = await authenticate(id, secret)
        return { ok: client?.id === id, calls }
      }
      const all = { ok: false, calls: candidates }
      expect(await counted('cl_unknown', 'whatever')).toEqual(all)
      expect(await counted(one.client_id, 'wrong')).toEqual(all)
      expect(await counted(two.client_id, 'wrong')).toEqual(all)
      expect(await counted(revoked.client_id, revoked.client_secret)).toEqual(all)
      expect(await counted(one.client_id, one.client_secret)).toEqual({ ok: true, calls: candidates })
      expect(await counted(two.client_id, two.client_secret)).toEqual({ ok: true, calls: candidates })
      expect(await counted(two.client_id, second.client_secret)).toEqual({ ok: true, calls: candidates })
    }
  }, 60_000)
})
