import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { IMPERSONATION_REFUSED } from '../api/auth/impersonation.ts'
import {
  createClient,
  createOrg,
  DEMO_SCOPES,
  delegateOrg,
  ensureDemoClient,
  undelegateOrg,
} from '../cli/admin.ts'
import type { Db, DbHandle } from '../db/index.ts'
import { type Backend, clientToken, http, startTestApi, type TestApi } from './helpers/api.ts'
import { cli } from './helpers/cli.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined)
})

const DATE = '2026-04-01'
const EPOCH = 438074

/** One computed day with its protocol record, as the day pipeline leaves it (reporting reads need one). */
async function seedComputedDay(db: Db) {
  await db('days').insert({
    chain_id: 31337,
    report_epoch: EPOCH,
    date: DATE,
    block_number: 100,
    tx_index: 0,
    log_index: 3,
    block_hash: `0x${'64'.padStart(64, '0')}`,
    block_time: new Date(`${DATE}T12:00:00Z`),
    previous_epoch: null,
    status: 'computed',
    visible_version: 1,
    last_version: 1,
    wallets: 0,
    engine_version: '1.0.0',
    content_hash: 'a'.repeat(64),
    computed_at: new Date(),
  })
  await db('protocol_records').insert({
    chain_id: 31337,
    report_epoch: EPOCH,
    version: 1,
    date: DATE,
    block_time: new Date(`${DATE}T12:00:00Z`),
    block_number: 100,
    total_protocol_mints_lseth: '0',
    total_protocol_burns_lseth: '0',
    total_protocol_active_keys_count: 1,
    rewards_eth: '0',
    gross_fee_rate: '0.1',
    gross_fee_lseth: '0',
    conversion_rate: '1',
    total_lseth_supply: '1000000000000000000000',
    total_underlying_eth: '1000000000000000000000',
    engine_version: '1.0.0',
  })
}

interface Client {
  client_id: string
  client_secret: string
}

/**
 * The operator's commands: `lsreport` as a process on Postgres (the API and the CLI share the database);
 * on the in-memory PGlite, which no second process can open, the same functions the CLI runs.
 */
function operatorCommands(backend: Backend, api: TestApi, env: Record<string, string>) {
  if (backend === 'postgres') {
    return {
      org: (name: string, operator = false) =>
        cli<{ id: string; operator: boolean }>(
          ['orgs', 'create', '--name', name, ...(operator ? ['--operator'] : []), '--json'],
          env,
        ),
      client: (orgId: string, scopes: string) =>
        cli<Client>(['clients', 'create', '--org', orgId, '--scopes', scopes, '--json'], env),
      delegate: (orgId: string, to: string) =>
        cli<{ delegated: boolean; changed: boolean }>(
          ['orgs', 'delegate', '--org', orgId, '--to', to, '--json'],
          env,
        ),
      undelegate: (orgId: string, to: string) =>
        cli<{ delegated: boolean; changed: boolean }>(
          ['orgs', 'undelegate', '--org', orgId, '--to', to, '--json'],
          env,
        ),
    }
  }
  const db = api.dbh.db
  return {
    org: (name: string, operator = false) => createOrg(db, { name, canAllowlist: true, operator }),
    client: (orgId: string, scopes: string) => createClient(db, { orgId, scopes }),
    delegate: (orgId: string, to: string) => delegateOrg(db, { orgId, delegateOrgId: to }),
    undelegate: (orgId: string, to: string) => undelegateOrg(db, { orgId, delegateOrgId: to }),
  }
}

describe.each([
  ['postgres', pgOk],
  ['pglite', true],
] as [Backend, boolean][])('Impersonate-Org as a delegation (%s)', (backend, enabled) => {
  let api: TestApi
  let ops: ReturnType<typeof operatorCommands>
  let orgA: string
  let orgB: string
  let account: string
  let asA: ReturnType<typeof http>
  let asB: ReturnType<typeof http>
  let bClient: Client

  beforeAll(async () => {
    if (!enabled) return
    const env: Record<string, string> = { LOG_LEVEL: 'warn' }
    let dbh: DbHandle | undefined
    if (backend === 'postgres') {
      const database = await migratedTestDatabase()
      cleanups.push(() => database.close())
      dbh = database
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-imp-'))
      cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
      Object.assign(env, { DATABASE_URL: database.url, DATA_DIR: dataDir })
    }
    api = await startTestApi(backend, {}, dbh ? { dbh } : {})
    cleanups.push(() => api.close())
    ops = operatorCommands(backend, api, env)
    await seedComputedDay(api.dbh.db)

    // A: a platform with an account; B: another organization whose client may impersonate
    orgA = (await ops.org('Platform A')).id
    orgB = (await ops.org('Support desk B')).id
    const aClient = await ops.client(orgA, 'read:platform write:platform read:eth-rewards')
    bClient = await ops.client(orgB, 'read:eth-rewards impersonate:org')
    asA = http(api.url, await clientToken(api.url, aClient))
    asB = http(api.url, await clientToken(api.url, bClient))
    const created = await asA('POST', '/v0/platform/accounts', { key: 'only-in-a' })
    expect(created.status).toBe(201)
    account = created.body.id
  }, 120_000)

  const read = (call: ReturnType<typeof http>, as?: string) =>
    call(
      'POST',
      '/eth/v1/rewards/accounts',
      { accounts: [account], date: DATE },
      as === undefined ? {} : { 'impersonate-org': as },
    )
  const auditRows = (target: string) =>
    api.dbh.db('impersonations').where({ target_org_id: target }).orderBy('id')

  test.runIf(enabled)(
    'behavior: without delegation a real foreign org and an unknown org id answer the same 403',
    async () => {
      const own = await read(asB)
      expect([own.status, own.body]).toEqual([200, []]) // B has no such account
      const foreign = await read(asB, orgA)
      const unknown = await read(asB, 'org_00000000000000000000000000000000')
      const garbage = await read(asB, 'x')
      for (const res of [foreign, unknown, garbage]) {
        expect(res.status).toBe(403)
        expect(res.body).toEqual({ message: IMPERSONATION_REFUSED, status: 'IR2008' })
      }
      // the summaries and the fee reads refuse alike
      for (const url of [`/eth/v1/rewards/accounts/only-in-a/summary`, `/eth/v1/platforms/${DATE}`]) {
        const res = await asB('GET', url, undefined, { 'impersonate-org': orgA })
        expect([res.status, res.body.status], url).toEqual([403, 'IR2008'])
      }
      // without the scope: 403 IR2003, as before
      const plain = await read(asA, orgB)
      expect([plain.status, plain.body.status]).toEqual([403, 'IR2003'])
      expect(await auditRows(orgA)).toEqual([])
    },
  )

  test.runIf(enabled)(
    'behavior: after orgs delegate the read as A answers 200 and is audited with both org ids; after undelegate 403 again',
    async () => {
      expect(await ops.delegate(orgA, orgB)).toMatchObject({ delegated: true, changed: true })
      const direct = await read(asA)
      const impersonated = await read(asB, orgA)
      expect(impersonated.status).toBe(200)
      expect(impersonated.body).toEqual(direct.body)
      expect(impersonated.body[0]).toMatchObject({ account_id: account })
      const requestId = impersonated.headers.get('x-request-id')

      const rows = await auditRows(orgA)
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({
        org_id: orgB,
        client_id: bClient.client_id,
        target_org_id: orgA,
        method: 'POST',
        route: '/eth/v1/rewards/accounts',
        request_id: requestId,
      })
      expect(rows[0].created_at).toBeInstanceOf(Date)
      // the delegation goes one way: A still cannot read as B (nor does A's token hold the scope)
      expect((await read(asA, orgB)).status).toBe(403)

      expect(await ops.undelegate(orgA, orgB)).toMatchObject({ delegated: false, changed: true })
      const refused = await read(asB, orgA)
      expect([refused.status, refused.body]).toEqual([
        403,
        { message: IMPERSONATION_REFUSED, status: 'IR2008' },
      ])
      expect(await auditRows(orgA)).toHaveLength(1)

      const changes = await api.dbh.db('delegation_changes').where({ org_id: orgA }).orderBy('id')
      expect(changes.map((c) => [c.action, c.delegate_org_id, c.actor])).toEqual([
        ['delegate', orgB, 'operator'],
        ['undelegate', orgB, 'operator'],
      ])
    },
  )

  test.runIf(enabled)(
    'behavior: an operator org reads as any org without delegation (audited); an unknown org is the same 403',
    async () => {
      const opsOrg = await ops.org('Operators', true)
      expect(opsOrg.operator).toBe(true)
      const desk = await ops.client(opsOrg.id, 'read:eth-rewards impersonate:org')
      const asOps = http(api.url, await clientToken(api.url, desk))
      const before = (await auditRows(orgA)).length
      const res = await read(asOps, orgA)
      expect(res.status).toBe(200)
      expect(res.body[0]).toMatchObject({ account_id: account })
      const rows = await auditRows(orgA)
      expect(rows).toHaveLength(before + 1)
      expect(rows.at(-1)).toMatchObject({ org_id: opsOrg.id, target_org_id: orgA })
      const unknown = await read(asOps, 'org_00000000000000000000000000000000')
      expect([unknown.status, unknown.body]).toEqual([
        403,
        { message: IMPERSONATION_REFUSED, status: 'IR2008' },
      ])
    },
  )

  test.runIf(enabled)(
    'behavior: the demo client holds platform scopes only: neither impersonate:org nor admin',
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-demo-'))
      cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
      const { demo } = await ensureDemoClient(api.dbh.db, { dataDir, baseUrl: api.url, authUrl: api.url })
      const scopes = demo.scopes.split(' ')
      expect(scopes).not.toContain('impersonate:org')
      expect(scopes).not.toContain('admin')
      expect(scopes.sort()).toEqual([...DEMO_SCOPES].sort())
      // and the token endpoint grants it nothing more
      for (const scope of ['impersonate:org', 'admin']) {
        const res = await http(api.url)('POST', '/oauth/token', {
          grant_type: 'client_credentials',
          audience: api.url,
          client_id: demo.client_id,
          client_secret: demo.client_secret,
          scope,
        })
        expect([res.status, res.body.error], scope).toEqual([400, 'invalid_scope'])
      }
      const asDemo = http(api.url, await clientToken(api.url, demo))
      const res = await read(asDemo, orgA)
      expect([res.status, res.body.status]).toEqual([403, 'IR2003'])
    },
  )

  test.runIf(enabled)(
    'behavior: a demo client made when it held every scope is replaced (revoked) by one with platform scopes',
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-demo-old-'))
      cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
      const org = await createOrg(api.dbh.db, { name: 'Demo Platform', canAllowlist: true })
      const old = await createClient(api.dbh.db, {
        orgId: org.id,
        scopes: 'read:platform admin impersonate:org',
      })
      const file = path.join(dataDir, 'demo-client.json')
      await fs.writeFile(file, JSON.stringify({ ...old, token_url: '', audience: '' }))
      const { demo, created } = await ensureDemoClient(api.dbh.db, {
        dataDir,
        baseUrl: api.url,
        authUrl: api.url,
      })
      expect(created).toBe(true)
      expect(demo.org_id).toBe(org.id)
      expect(demo.client_id).not.toBe(old.client_id)
      expect(demo.scopes.split(' ')).not.toContain('admin')
      const oldToken = await http(api.url)('POST', '/oauth/token', {
        grant_type: 'client_credentials',
        audience: api.url,
        client_id: old.client_id,
        client_secret: old.client_secret,
      })
      expect(oldToken.body.error).toBe('invalid_client')
      expect(JSON.parse(await fs.readFile(file, 'utf8')).client_id).toBe(demo.client_id)
    },
  )
})
