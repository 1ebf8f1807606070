import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, test } from 'vitest'
import { createClient, createOrg } from '../cli/admin.ts'
import { clientToken, freePort, orgWithToken, pgliteAppsOfFile, type TestApi } from './helpers/api.ts'
import { spawnCli, TEST_SIGNING_KEY_SECRET } from './helpers/cli.ts'
import {
  IN_CI,
  migratedTestDatabase,
  postgresAvailable,
  REDIS_URL,
  redisAvailable,
} from './helpers/services.ts'

const redisOk = await redisAvailable()
const pgOk = await postgresAvailable()
const cleanups: (() => Promise<unknown>)[] = []
// one migrated PGlite for every app of the file: each test makes its own clients, the limits live in each app
const startApi = pgliteAppsOfFile()
const redises: Redis[] = []
afterAll(async () => {
  for (const r of redises) r.disconnect()
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
})

const MIB = 1024 * 1024
/** A 1 MiB JSON text of nested arrays: what JSON.parse took 0.25-0.6 s of the event loop over (issue 36). */
const NESTED_ARRAYS = `${'['.repeat(MIB / 2)}${']'.repeat(MIB / 2)}`
/** The same of nested objects. */
const NESTED_OBJECTS = `${'{"a":'.repeat(MIB / 6)}1${'}'.repeat(MIB / 6)}`

/** How each request kind is answered, by status, over `n` requests from one address. */
async function statuses(
  api: TestApi,
  n: number,
  request: { method: 'GET' | 'POST'; url: string; payload?: string; headers?: Record<string, string> },
  remoteAddress: string,
): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const res = await api.app.inject({
      ...request,
      remoteAddress,
      headers: { 'content-type': 'application/json', ...request.headers },
    })
    out.push(res.statusCode)
  }
  return out
}

/** `[status, count]` runs of a list of statuses, in order: [[400, 600], [429, 100]]. */
function runs(codes: number[]): [number, number][] {
  const out: [number, number][] = []
  for (const code of codes) {
    const last = out[out.length - 1]
    if (last && last[0] === code) last[1]++
    else out.push([code, 1])
  }
  return out
}

describe('the rate limit counts every request at onRequest (refused ones included)', () => {
  test('behavior: 700 refused bodies to the token endpoint from one address: 600 answer 400, then 429 IR1005', async () => {
    const api = await startApi()
    const kinds = [
      '{"grant_type": 12}', // schema-invalid
      '{"grant_type": ', // malformed
      NESTED_ARRAYS.slice(0, 4096), // nested deeper than 32 levels (malformed as well: refused before the parse)
    ]
    const codes: number[] = []
    for (let i = 0; i < 700; i++) {
      const res = await api.app.inject({
        method: 'POST',
        url: '/oauth/token',
        remoteAddress: '198.51.100.10',
        headers: { 'content-type': 'application/json' },
        payload: kinds[i % kinds.length] as string,
      })
      codes.push(res.statusCode)
      if (i === 699) expect(res.json()).toMatchObject({ status: 'IR1005' })
    }
    expect(runs(codes)).toEqual([
      [400, 600],
      [429, 100],
    ])
    // another address has its own budget
    expect(
      await statuses(api, 1, { method: 'POST', url: '/oauth/token', payload: '{}' }, '198.51.100.11'),
    ).toEqual([400])
  }, 60_000)

  test('behavior: a client sending 700 schema-invalid reports meets a 429 after its 600; another client is unaffected', async () => {
    const api = await startApi()
    const a = await orgWithToken(api, { scopes: 'read:eth-rewards' })
    const b = await orgWithToken(api, { scopes: 'read:eth-rewards' })
    const report = (token: string) => ({
      method: 'POST' as const,
      url: '/eth/v1/rewards/wallets',
      payload: '{"addresses": 12, "date": "2026-05-01"}',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(runs(await statuses(api, 700, report(a.token), '198.51.100.20'))).toEqual([
      [400, 600],
      [429, 100],
    ])
    expect(await statuses(api, 1, report(b.token), '198.51.100.20')).toEqual([400])
  }, 60_000)

  test('behavior: unmatched routes count against the address too', async () => {
    const api = await startApi({ RATE_LIMIT_MAX: '3' })
    const codes = await statuses(api, 4, { method: 'POST', url: '/nope', payload: '{}' }, '198.51.100.30')
    expect(codes).toEqual([404, 404, 404, 429])
  })

  test('behavior: a 1 MiB body nested deeper than 32 levels is 400 IR1000 without a parse, on any route', async () => {
    const api = await startApi()
    const org = await orgWithToken(api, { scopes: 'read:eth-rewards write:platform' })
    for (const [url, auth] of [
      ['/oauth/token', false],
      ['/eth/v1/rewards/wallets', true],
      ['/v0/platform/accounts', true],
    ] as const) {
      for (const payload of [NESTED_ARRAYS, NESTED_OBJECTS]) {
        const res = await api.app.inject({
          method: 'POST',
          url,
          headers: {
            'content-type': 'application/json',
            ...(auth ? { authorization: `Bearer ${org.token}` } : {}),
          },
          payload,
        })
        expect(res.statusCode, url).toBe(400)
        expect(res.json(), url).toMatchObject({
          message: 'body is nested deeper than 32 levels',
          status: 'IR1000',
        })
      }
    }
    const many = await api.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/json' },
      payload: `[${'0,'.repeat(MIB / 2 - 2)}0]`,
    })
    expect(many.statusCode).toBe(400)
    expect(many.json()).toMatchObject({ message: 'body holds more than 10000 values', status: 'IR1006' })
  })
})

describe('/metrics token guesses', () => {
  test('behavior: 700 wrong METRICS_TOKEN guesses from one address: 600 answer 401, then 429; the right token from there too, not from elsewhere', async () => {
    const token = `mt-${randomBytes(16).toString('hex')}`
    const api = await startApi({ METRICS_TOKEN: token })
    const scrape = (authorization: string | undefined, remoteAddress: string) =>
      api.app.inject({
        method: 'GET',
        url: '/metrics',
        remoteAddress,
        headers: authorization ? { authorization } : {},
      })
    expect((await scrape(`Bearer ${token}`, '198.51.100.40')).statusCode).toBe(200)
    const codes: number[] = []
    for (let i = 0; i < 700; i++) {
      const res = await scrape(i % 7 === 0 ? undefined : `Bearer guess-${i}`, '198.51.100.40')
      codes.push(res.statusCode)
      if (i === 699) {
        expect(res.json()).toMatchObject({ status: 'IR1005' })
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
      }
    }
    expect(runs(codes)).toEqual([
      [401, 600],
      [429, 100],
    ])
    // over the budget the address is refused before its token is compared; another address scrapes
    expect((await scrape(`Bearer ${token}`, '198.51.100.40')).statusCode).toBe(429)
    expect((await scrape(`Bearer ${token}`, '198.51.100.41')).statusCode).toBe(200)
  }, 60_000)
})

describe('rate-limit keys in a shared Redis', () => {
  test.runIf(redisOk)(
    "behavior: two deployments (QUEUE_PREFIX) on one Redis count apart; every key is in its deployment's namespace",
    async () => {
      const redis = new Redis(REDIS_URL)
      redises.push(redis)
      const tag = randomBytes(4).toString('hex')
      const [blue, green] = [`blue-${tag}`, `green-${tag}`]
      const env = { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' }
      const a = await startApi({ ...env, QUEUE_PREFIX: blue }, { redis })
      const b = await startApi({ ...env, QUEUE_PREFIX: green }, { redis })
      const redeems = { method: 'GET' as const, url: '/eth/v1/redeems_info' }
      const address = '198.51.100.50'
      expect((await statuses(a, 4, redeems, address)).at(-1)).toBe(429)
      expect(await statuses(b, 3, redeems, address)).not.toContain(429)
      // requests refused by authentication count in the same namespace
      const refused = {
        method: 'GET' as const,
        url: '/v0/platform/accounts',
        headers: { authorization: 'Bearer forged' },
      }
      expect(await statuses(a, 4, refused, address)).toEqual([401, 401, 401, 429])
      expect(await statuses(b, 1, refused, address)).toEqual([401])
      const keys = async (pattern: string) => (await redis.keys(pattern)).sort()
      expect(await keys(`blue-${tag}*`)).toEqual([
        `${blue}:rate-limit:${address}`,
        `${blue}:rate-limit:auth-refused-${address}`,
      ])
      expect(await keys(`green-${tag}*`)).toEqual([
        `${green}:rate-limit:${address}`,
        `${green}:rate-limit:auth-refused-${address}`,
      ])
      expect(
        await keys(`*${address}*`).then((found) => found.filter((k) => k.includes('undefined'))),
      ).toEqual([])
      await redis.del(...(await keys(`*-${tag}:rate-limit:*`)))
    },
  )
})

/**
 * A client in a process of its own (node builtins only), on one keep-alive connection. Once its body is built
 * it sends 'ready' and waits for the end time (epoch ms); then `flood` posts each of `targets` in turn until
 * then, counting the statuses, and `probe` sends `GET /health` every 20 ms, keeping each latency. It sends its
 * figures and exits.
 */
const CLIENT = `
const http = require('node:http')
const { mode, base, targets, body } = JSON.parse(process.argv[1])
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const payload = body === 'arrays'
  ? Buffer.from('['.repeat(524288) + ']'.repeat(524288))
  : Buffer.from('{"a":'.repeat(174762) + '1' + '}'.repeat(174762))
const send = (target) => new Promise((resolve) => {
  const started = performance.now()
  const req = http.request(base + (target ? target.url : '/health'), {
    agent, method: target ? 'POST' : 'GET',
    headers: target ? { 'content-type': 'application/json', ...target.headers } : {},
  }, (res) => { res.resume(); res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started })) })
  req.on('error', () => resolve({ status: 0, ms: performance.now() - started }))
  req.end(target ? payload : undefined)
})
process.once('message', async ({ until }) => {
  const codes = {}
  const ms = []
  for (let i = 0; Date.now() < until; i++) {
    const r = await send(mode === 'flood' ? targets[i % targets.length] : undefined)
    codes[r.status] = (codes[r.status] ?? 0) + 1
    if (mode === 'probe') { ms.push(r.ms); await new Promise((s) => setTimeout(s, 20)) }
  }
  process.send({ codes, ms }, () => process.exit(0))
})
process.send('ready')
`

/** A CLIENT process started: `ready` once it waits for its end time, `run(until)` its figures. */
interface Client {
  ready: Promise<void>
  run(until: number): Promise<{ codes: Record<string, number>; ms: number[] }>
}

/** Starts one CLIENT process. */
function client(args: object): Client {
  const child = spawn(process.execPath, ['-e', CLIENT, JSON.stringify(args)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const messages: unknown[] = []
  let wake = () => {}
  child.on('message', (m) => {
    messages.push(m)
    wake()
  })
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      const check = () => {
        if (messages.length > 0) return resolve(messages.shift())
        wake = check
      }
      child.once('exit', (code) => reject(new Error(`client exited with ${code}`)))
      check()
    })
  const ready = next().then(() => undefined)
  return {
    ready,
    run: async (until) => {
      child.send({ until })
      return (await next()) as { codes: Record<string, number>; ms: number[] }
    },
  }
}

/** The `p` quantile (0-1) of latencies in ms; Infinity of none. */
function percentile(ms: number[], p: number): number {
  const sorted = [...ms].sort((x, y) => x - y)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.POSITIVE_INFINITY
}

/**
 * ANONYMOUS_FLOOD_SECONDS: how long the flood lasts (the 15 s); 3 s by default and under CI, so the
 * file stays a few seconds of the suite.
 */
const FLOOD_SECONDS = Number(process.env.ANONYMOUS_FLOOD_SECONDS ?? 3)

/** A bare node:http server in a process of its own: reads each body whole (as text) and answers 400. */
async function bareServer(): Promise<{ base: string; stop: () => Promise<void> }> {
  const script = `
    const server = require('node:http').createServer((req, res) => {
      let body = ''
      req.setEncoding('utf8')
      req.on('data', (chunk) => { body += chunk })
      req.on('end', () => { res.writeHead(400, { 'content-type': 'application/json' }); res.end('{}') })
    })
    server.listen(0, '127.0.0.1', () => process.send(server.address().port))
  `
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve(Number(m))))
  return {
    base: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill()
      }),
  }
}

/** The CPU seconds a process has used, from /proc (user and system). */
async function cpuOf(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The resident memory of a process, from /proc (bytes). */
async function rssOf(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
}

describe('a flood of 1 MiB nested bodies', () => {
  test.runIf(pgOk)(
    `behavior: 4 client processes flood POST /oauth/token and a reporting route of an lsreport api process for ${FLOOD_SECONDS} s: /health p99 < 100 ms, RSS grows < 50 MB`,
    async () => {
      const database = await migratedTestDatabase()
      cleanups.push(() => database.close())
      const org = await createOrg(database.db, { name: 'Flood', canAllowlist: false })
      const created = await createClient(database.db, { orgId: org.id, scopes: 'read:eth-rewards' })
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-flood-'))
      cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
      const port = await freePort()
      const base = `http://127.0.0.1:${port}`
      const server = await spawnCli(
        ['api'],
        {
          DATABASE_URL: database.url,
          DATA_DIR: dataDir,
          PORT: String(port),
          SIGNING_KEY_SECRET: TEST_SIGNING_KEY_SECRET,
          LOG_LEVEL: 'warn',
          // a budget the flood never reaches: every body is read and refused by the pre-scan, none by the limit
          RATE_LIMIT_MAX: '1000000',
          RATE_LIMIT_WINDOW_MS: '1000',
        },
        async () => (await fetch(`${base}/ready`)).status === 200,
      )
      cleanups.push(() => server.stop())
      const pid = server.child.pid as number
      const token = await clientToken(base, created)
      const targets = [
        { url: '/oauth/token', headers: {} },
        { url: '/eth/v1/rewards/wallets', headers: { authorization: `Bearer ${token}` } },
      ]
      const start = (mode: string, body?: string) => client({ mode, base, targets, body })
      // a warm-up: the routes' first requests compile their code
      const warm = start('flood', 'arrays')
      await warm.ready
      await warm.run(Date.now() + 500)
      // the reference: the API's /health while the same 4 clients flood a bare node:http server (a process of its
      // own that reads each body and answers 400): what such a flood costs the machine itself (on a quiet one a
      // few ms; on one shared with other work, the flood's processes delay everyone's scheduling)
      const bare = await bareServer()
      cleanups.push(bare.stop)
      const reference = [
        start('probe'),
        ...[0, 1, 2, 3].map((i) =>
          client({ mode: 'flood', base: bare.base, targets, body: i % 2 ? 'objects' : 'arrays' }),
        ),
      ]
      await Promise.all(reference.map((c) => c.ready))
      const [referenceProbe] = await Promise.all(
        reference.map((c) => c.run(Date.now() + FLOOD_SECONDS * 1000)),
      )
      await bare.stop()
      const baseline = percentile(referenceProbe?.ms ?? [], 0.99)
      const clients = [
        start('probe'),
        ...[0, 1, 2, 3].map((i) => start('flood', i % 2 ? 'objects' : 'arrays')),
      ]
      await Promise.all(clients.map((c) => c.ready))
      const rssBefore = await rssOf(pid)
      let rssMax = rssBefore
      const sampler = setInterval(async () => {
        rssMax = Math.max(rssMax, await rssOf(pid).catch(() => 0))
      }, 50)
      const cpuBefore = await cpuOf(pid)
      const until = Date.now() + FLOOD_SECONDS * 1000
      const [probe, ...floods] = await Promise.all(clients.map((c) => c.run(until)))
      const cpu = (await cpuOf(pid)) - cpuBefore
      clearInterval(sampler)
      rssMax = Math.max(rssMax, await rssOf(pid))
      const ms = probe?.ms ?? []
      const p99 = percentile(ms, 0.99)
      const refused = floods.reduce((n, f) => n + (f.codes['400'] ?? 0), 0)
      const figures =
        `${refused} bodies refused in ${FLOOD_SECONDS} s (the API's CPU: ${((cpu * 1000) / Math.max(1, refused)).toFixed(1)} ms each, ` +
        `${((cpu / FLOOD_SECONDS) * 100).toFixed(0)} % of a core); /health p50 ${percentile(ms, 0.5).toFixed(1)} ms, ` +
        `p99 ${p99.toFixed(1)} ms over ${ms.length} (the same flood on a bare server: /health p99 ${baseline.toFixed(1)} ms); ` +
        `RSS ${(rssBefore / 2 ** 20).toFixed(0)} MB +${((rssMax - rssBefore) / 2 ** 20).toFixed(1)} MB`
      if (!IN_CI) console.log(figures)
      // every flooded request was answered 400 by the pre-scan, every probe 200
      for (const f of floods) expect(Object.keys(f.codes), figures).toEqual(['400'])
      expect(probe?.codes, figures).toEqual({ 200: ms.length })
      expect(refused, figures).toBeGreaterThan(4 * FLOOD_SECONDS)
      // under 100 ms over what the same flood on a bare server costs the machine (a few ms on a quiet one)
      expect(p99, figures).toBeLessThan(100 + baseline)
      expect(rssMax - rssBefore, figures).toBeLessThan(50 * 2 ** 20)
    },
    90_000 + FLOOD_SECONDS * 1000,
  )
})

describe('form bodies of the token endpoint', () => {
  test('behavior: a form of more than 64 fields is 400 IR1006 before its parse; a token form still works', async () => {
    const api = await startApi()
    const org = await orgWithToken(api)
    const form = (body: string) =>
      api.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: body,
      })
    const flood = await form(Array.from({ length: 100_000 }, (_, i) => `f${i}=`).join('&'))
    expect(flood.statusCode).toBe(400)
    expect(flood.json()).toMatchObject({ message: 'form body holds more than 64 fields', status: 'IR1006' })
    const ok = await form(
      new URLSearchParams({
        grant_type: 'client_credentials',
        audience: api.url,
        client_id: org.clientId,
        client_secret: org.clientSecret,
      }).toString(),
    )
    expect(ok.statusCode).toBe(200)
  })
})
