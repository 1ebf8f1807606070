import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ClientCredentials } from 'simple-oauth2'
import { afterAll, describe, expect, test } from 'vitest'
import { freePort, http } from './helpers/api.ts'
import { cli, cliFails, spawnCli, TEST_SIGNING_KEY_SECRET } from './helpers/cli.ts'
import { createTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

async function tokenFor(baseUrl: string, client: { client_id: string; client_secret: string }) {
  const oauth = new ClientCredentials({
    client: { id: client.client_id, secret: client.client_secret },
    auth: { tokenHost: baseUrl, tokenPath: '/oauth/token' },
  })
  const token = await oauth.getToken({ audience: baseUrl } as never)
  return token.token.access_token as string
}

describe.each(['postgres', 'pglite'] as const)('black box: CLI -> OAuth2 library -> API (%s)', (backend) => {
  test.runIf(backend === 'pglite' || pgOk)(
    'behavior: org and client from the CLI, a token from simple-oauth2, a full lifecycle, and isolation',
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-bb-'))
      cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
      const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'warn' }
      if (backend === 'postgres') {
        const database = await createTestDatabase()
        cleanups.push(database.drop)
        env.DATABASE_URL = database.url
        env.SIGNING_KEY_SECRET = TEST_SIGNING_KEY_SECRET
      }
      const org = await cli<{ id: string; can_allowlist: boolean }>(
        ['orgs', 'create', '--name', 'Custodian A', '--json'],
        env,
      )
      expect(org).toMatchObject({ id: expect.stringMatching(/^org_/), can_allowlist: true })
      const client = await cli<{ client_id: string; client_secret: string; scopes: string }>(
        ['clients', 'create', '--org', org.id, '--scopes', 'read:platform write:platform', '--json'],
        env,
      )
      expect(client.scopes).toBe('read:platform write:platform')
      const secondary = await cli<{ id: string; can_allowlist: boolean }>(
        ['orgs', 'create', '--name', 'Exchange B', '--no-allowlist', '--json'],
        env,
      )
      expect(secondary.can_allowlist).toBe(false)
      const client2 = await cli<{ client_id: string; client_secret: string }>(
        ['clients', 'create', '--org', secondary.id, '--scopes', 'read:platform write:platform', '--json'],
        env,
      )
      const badScope = await cliFails(
        ['clients', 'create', '--org', org.id, '--scopes', 'read:everything'],
        env,
      )
      expect(badScope.code).toBe(2) // a usage error, refused before the database opens
      expect(badScope.stderr).toMatch(/unknown scope/)

      const port = await freePort()
      const baseUrl = `http://127.0.0.1:${port}`
      const server = await spawnCli(['api'], { ...env, PORT: String(port) }, async () => {
        const res = await fetch(`${baseUrl}/ready`)
        return res.status === 200
      })
      cleanups.push(server.stop)

      const token = await tokenFor(baseUrl, client)
      const call = http(baseUrl, token)
      const account = await call('POST', '/v0/platform/accounts', { key: 'customer-42' })
      expect(account.status).toBe(201)
      const wallet = await call('POST', '/v0/platform/accounts/customer-42/wallets', {
        address: '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549',
        type: 'ETH',
        allowlisted: 'true',
      })
      expect([wallet.status, wallet.body.status]).toEqual([200, 'NOT_READY'])
      const paused = await call('PATCH', '/v0/platform/accounts/customer-42/pause')
      expect([paused.body.status, paused.body.wallets[0].status]).toEqual(['PAUSED', 'PAUSED'])
      const reactivated = await call('PATCH', '/v0/platform/accounts/customer-42/reactivate')
      expect([reactivated.body.status, reactivated.body.wallets[0].status]).toEqual(['ACTIVE', 'NOT_READY'])
      const removedWallet = await call(
        'PATCH',
        `/v0/platform/accounts/customer-42/wallets/${wallet.body.id}/remove`,
      )
      expect(removedWallet.body).toMatchObject({ status: 'PENDING_REMOVAL', on_platform: false })
      const removed = await call('PATCH', '/v0/platform/accounts/customer-42/remove')
      expect(removed.body.status).toBe('REMOVED')
      const again = await call('PATCH', '/v0/platform/accounts/customer-42/reactivate')
      expect([again.status, again.body.status]).toEqual([400, 'IR3003'])

      const other = http(baseUrl, await tokenFor(baseUrl, client2))
      expect((await other('GET', '/v0/platform/accounts')).body).toEqual([])
      expect((await other('GET', '/v0/platform/accounts/customer-42')).status).toBe(404)
      expect((await other('GET', `/v0/platform/wallets/${wallet.body.id}`)).status).toBe(404)
      const otherAccount = await other('POST', '/v0/platform/accounts', { key: 'customer-42' })
      expect(otherAccount.status).toBe(201)
      const forbidden = await other('POST', '/v0/platform/accounts/customer-42/wallets', {
        address: '0x0000000000000000000000000000000000000001',
        type: 'ETH',
      })
      expect([forbidden.status, forbidden.body.status]).toEqual([403, 'IR3104'])
    },
  )
})

describe('embedded database lock', () => {
  test('behavior: a second process on the same PGlite data directory stops with a clear error', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-lock-'))
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
    const port = await freePort()
    const env = { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' }
    const server = await spawnCli(
      ['api'],
      env,
      async () => (await fetch(`http://127.0.0.1:${port}/health`)).ok,
    )
    cleanups.push(server.stop)
    const second = await cliFails(['orgs', 'create', '--name', 'X', '--json'], env)
    expect(second.code).toBe(1)
    expect(second.stderr).toMatch(/in use by process \d+.*DATABASE_URL/s)
    await server.stop()
    const org = await cli<{ id: string }>(['orgs', 'create', '--name', 'X', '--json'], env)
    expect(org.id).toMatch(/^org_/)
  })
})
