import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { KnexTimeoutError } from 'knex'
import pg from 'pg'
import { afterAll, describe, expect, test } from 'vitest'
import { toErrorReply } from '../api/error-reply.ts'
import { isConnectionLoss } from '../db/index.ts'
import { DatabaseStallError } from '../db/stall-watchdog.ts'
import { clientToken, freePort, http } from './helpers/api.ts'
import { cli, cliOrgClient, spawnCli, TEST_SIGNING_KEY_SECRET } from './helpers/cli.ts'
import { createTestDatabase, postgresAvailable } from './helpers/services.ts'
import { startTcpProxy } from './helpers/tcp-proxy.ts'

const pgOk = await postgresAvailable()
const cleanups: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
})

/** An error with a `code`, as node sockets and pg raise them. */
function coded(code: string, message = code): Error {
  return Object.assign(new Error(message), { code })
}

describe('database connection loss maps to 503 IR5030', () => {
  const losses: [string, unknown][] = [
    ['ECONNRESET', coded('ECONNRESET', 'read ECONNRESET')],
    ['ECONNREFUSED', coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['EPIPE', coded('EPIPE')],
    ['ETIMEDOUT', coded('ETIMEDOUT')],
    ['57P01 admin shutdown', coded('57P01', 'terminating connection due to administrator command')],
    ['57P03 cannot connect now', coded('57P03', 'the database system is starting up')],
    ['08006 connection failure', coded('08006')],
    ['08003 connection does not exist', coded('08003')],
    ['pg: Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    ['pg: connect timeout', new Error('timeout exceeded when trying to connect')],
    ['pg: connected, no startup answer', new Error('timeout expired')],
    ['a silent connection', new DatabaseStallError(2_000)],
    [
      'knex pool acquire timeout',
      new KnexTimeoutError('Knex: Timeout acquiring a connection. The pool is probably full.'),
    ],
    ['a wrapped cause', new Error('insert failed', { cause: coded('ECONNRESET') })],
  ]
  test.each(losses)('behavior: %s answers 503 IR5030 {message, status}', (_name, err) => {
    expect(isConnectionLoss(err)).toBe(true)
    const reply = toErrorReply(err)
    expect(reply.http).toBe(503)
    expect(reply.body).toEqual({ message: expect.any(String), status: 'IR5030' })
  })

  test('behavior: query errors that are not a connection loss stay 500 IR5000', () => {
    for (const err of [coded('22021'), coded('23505'), coded('40P01'), new Error('boom'), undefined]) {
      expect(isConnectionLoss(err)).toBe(false)
      expect(toErrorReply(err ?? new Error('x')).http).toBe(500)
    }
  })
})

type Answer = { status: number; body: Record<string, unknown>; ms: number }

/** `lsreport api` on a fresh database reached through a TCP proxy the test can cut or stall, with a token. */
async function apiThroughProxy(extraEnv: Record<string, string> = {}) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-dbloss-'))
  cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
  const database = await createTestDatabase()
  cleanups.push(database.drop)
  const direct = new URL(database.url)
  const proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) })
  cleanups.push(proxy.stop)
  const viaProxy = new URL(database.url)
  viaProxy.hostname = '127.0.0.1'
  viaProxy.port = String(proxy.port)
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const env = {
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    SIGNING_KEY_SECRET: TEST_SIGNING_KEY_SECRET,
    PORT: String(port),
    LOG_LEVEL: 'warn',
  }
  await cli(['migrate'], env)
  const { org, client } = await cliOrgClient(env, 'Outage Org')
  const server = await spawnCli(
    ['api'],
    { ...env, DATABASE_URL: viaProxy.toString(), RATE_LIMIT_MAX: '100000', ...extraEnv },
    async () => (await fetch(`${base}/ready`)).status === 200,
  )
  cleanups.push(server.stop)
  const call = http(base, await clientToken(base, client))
  const timed = async (method: string, url: string, body?: unknown): Promise<Answer> => {
    const started = Date.now()
    const res = await call(method, url, body)
    return { status: res.status, body: res.body, ms: Date.now() - started }
  }
  return { database, direct, proxy, server, base, org, timed }
}

describe.runIf(pgOk)(
  'database connection loss against a running API (lsreport api through a TCP proxy)',
  () => {
    test('behavior: during a Postgres outage requests answer 503 IR5030 within a bound; after it the same process answers 200 with no lost or duplicated writes', async () => {
      const { database, direct, proxy, server, base, org, timed } = await apiThroughProxy()
      const createAccount = (key: string) => timed('POST', '/v0/platform/accounts', { key })
      expect((await createAccount('before')).status).toBe(201)

      /** Every answer is 2xx or 503 IR5030 with the documented body, within 15 s. */
      const expectOkOr503 = (answers: Answer[]) => {
        for (const a of answers) {
          expect(a.ms, JSON.stringify(a)).toBeLessThan(15_000)
          if (a.status === 503) expect(a.body).toEqual({ message: expect.any(String), status: 'IR5030' })
          else expect(a.status, `${JSON.stringify(a)}\n${server.output()}`).toBeLessThan(300)
        }
      }

      // 1) cut every connection mid-burst, keep sending during the outage
      const keys = Array.from({ length: 40 }, (_, i) => `burst-${i}`)
      const burst = keys.map(async (key, i) => {
        await new Promise((r) => setTimeout(r, i * 5))
        return [key, await createAccount(key)] as const
      })
      setTimeout(() => proxy.cut(), 60)
      const answered = await Promise.all(burst)
      const during = await Promise.all([
        timed('GET', '/v0/platform/accounts'),
        createAccount('during-1'),
        timed('GET', '/v0/platform/accounts/before'),
        createAccount('during-2'),
      ])
      expectOkOr503(answered.map(([, a]) => a))
      expectOkOr503(during)
      expect(during.every((a) => a.status === 503)).toBe(true)
      expect((await fetch(`${base}/ready`)).status).toBe(503)

      // 2) restore: the same process answers 200 without a restart
      proxy.restore()
      const deadline = Date.now() + 20_000
      let after = await timed('GET', '/v0/platform/accounts/before')
      while (after.status !== 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200))
        after = await timed('GET', '/v0/platform/accounts/before')
      }
      expect(after.status, server.output()).toBe(200)
      expect(server.child.exitCode).toBeNull()

      // 3) backends killed by the server (pg_terminate_backend, SQLSTATE 57P01): 503 or 200, then 200
      const admin = new pg.Client({ connectionString: database.url })
      await admin.connect()
      cleanups.push(() => admin.end())
      const dbName = direct.pathname.slice(1)
      const kill = () =>
        admin.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
          [dbName],
        )
      await kill()
      const afterKill = await Promise.all(['kill-1', 'kill-2', 'kill-3'].map(createAccount))
      expectOkOr503(afterKill)
      await kill()
      const recovered = await Promise.all(
        ['kill-4', 'kill-5'].map(async (k) => {
          let a = await createAccount(k)
          for (let i = 0; i < 20 && a.status === 503; i++) a = await createAccount(k)
          return a
        }),
      )
      expect(recovered.map((a) => a.status)).toEqual([201, 201])

      // 4) nothing acknowledged is lost, nothing is duplicated
      const rows = (
        await admin.query<{ key: string; n: string }>(
          'select key, count(*)::text as n from accounts where org_id = $1 group by key',
          [org.id],
        )
      ).rows
      const counts = new Map(rows.map((r) => [r.key, Number(r.n)]))
      const acknowledged = [
        ['before', await createAccount('before')] as const,
        ...answered,
        ...afterKill.map((a, i) => [`kill-${i + 1}`, a] as const),
      ].filter(([key, a]) => (a.status >= 200 && a.status < 300) || key === 'before')
      for (const [key] of acknowledged) expect(counts.get(key), key).toBe(1)
      for (const [key, n] of counts) expect(n, key).toBe(1)
      // a write refused with 503 is either absent or whole; retrying it never duplicates
      for (const [key, a] of answered.filter(([, a]) => a.status === 503)) {
        const retry = await createAccount(key)
        expect([201, 400], JSON.stringify(a)).toContain(retry.status)
      }
      const total = await admin.query<{ n: string; d: string }>(
        'select count(*)::text as n, count(distinct key)::text as d from accounts where org_id = $1',
        [org.id],
      )
      expect(total.rows[0]?.n).toBe(total.rows[0]?.d)
    }, 180_000)

    test('behavior: a database that goes silent (no reset, bytes just stop) answers 503 IR5030 within DB_STALL_MS plus the acquire bound, and the same process recovers', async () => {
      const STALL_MS = 2_000
      const { proxy, server, timed } = await apiThroughProxy({ DB_STALL_MS: String(STALL_MS) })
      expect((await timed('POST', '/v0/platform/accounts', { key: 'before' })).status).toBe(201)
      proxy.stall()
      const silent = await Promise.all([
        timed('GET', '/v0/platform/accounts/before'),
        timed('POST', '/v0/platform/accounts', { key: 'during' }),
        timed('GET', '/v0/platform/accounts'),
      ])
      for (const a of silent) {
        expect(a.status, `${JSON.stringify(a)}\n${server.output()}`).toBe(503)
        expect(a.body).toEqual({ message: expect.any(String), status: 'IR5030' })
        // a pooled connection fails after the stall bound; a new one after the 5 s connect bound
        expect(a.ms).toBeLessThan(STALL_MS + 5_000 + 2_000)
      }
      proxy.restore()
      let after = await timed('GET', '/v0/platform/accounts/before')
      for (let i = 0; i < 50 && after.status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 200))
        after = await timed('GET', '/v0/platform/accounts/before')
      }
      expect(after.status, server.output()).toBe(200)
      expect(server.child.exitCode).toBeNull()
      // the write cut by the stall is whole or absent; a retry never duplicates
      const retry = await timed('POST', '/v0/platform/accounts', { key: 'during' })
      expect([201, 400]).toContain(retry.status)
      const list = await timed('GET', '/v0/platform/accounts')
      const keys = (list.body as unknown as { key: string }[]).map((a) => a.key).sort()
      expect(keys).toEqual(['before', 'during'])
    }, 120_000)
  },
)
