import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, test } from 'vitest'
import { addClientSecret, revokeClient } from '../cli/admin.ts'
import { http, orgWithToken, pgliteAppsOfFile, type TestApi } from './helpers/api.ts'
import { REDIS_URL, redisAvailable } from './helpers/services.ts'

const redisOk = await redisAvailable()
const redises: Redis[] = []
// one migrated PGlite for every app of the file: the limits live in each app's store, and each test makes its
// own clients
const startTestApp = pgliteAppsOfFile()
afterAll(() => {
  for (const r of redises) r.disconnect()
})
/** An app over the file's database, closed after the file. */
function startApi(env: Record<string, string> = {}, redis?: Redis): Promise<TestApi> {
  return startTestApp(env, redis ? { redis } : {})
}

describe.each(['memory', 'redis'] as const)('rate limit per client (%s store)', (store) => {
  test.runIf(store === 'memory' || redisOk)(
    'behavior: over the limit answers 429 IR1005 with Retry-After; another client is unaffected',
    async () => {
      let redis: Redis | undefined
      if (store === 'redis') {
        redis = new Redis(REDIS_URL, { keyPrefix: `rl${randomBytes(4).toString('hex')}-` })
        redises.push(redis)
      }
      const api = await startApi({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' }, redis)
      const a = await orgWithToken(api)
      const b = await orgWithToken(api)
      const callA = http(api.url, a.token)
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) statuses.push((await callA('GET', '/v0/platform/accounts')).status)
      expect(statuses).toEqual([200, 200, 200, 429])
      const limited = await callA('GET', '/v0/platform/accounts')
      expect(limited.body).toEqual({ message: expect.stringMatching(/rate limit/), status: 'IR1005' })
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
      expect((await http(api.url, b.token)('GET', '/v0/platform/accounts')).status).toBe(200)
    },
  )
})

describe('liveness and the client address', () => {
  // 600 probes against a budget of 3: 200 times over it on each probe route (the probes are outside the limit,
  // not under a larger one)
  test('behavior: /health, /ready and the JWKS answer 200 after 600 anonymous requests from one address, while other routes answer 429', async () => {
    const api = await startApi({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' })
    const get = (url: string) => api.app.inject({ method: 'GET', url, remoteAddress: '203.0.113.7' })
    for (let i = 0; i < 3; i++) expect((await get('/eth/v1/redeems_info')).statusCode).not.toBe(429)
    expect((await get('/eth/v1/redeems_info')).statusCode).toBe(429)
    const seen = new Map<string, Set<number>>()
    for (let i = 0; i < 600; i++) {
      const url = ['/health', '/ready', '/.well-known/jwks.json'][i % 3] as string
      const codes = seen.get(url) ?? new Set<number>()
      codes.add((await get(url)).statusCode)
      seen.set(url, codes)
    }
    expect(Object.fromEntries([...seen].map(([url, codes]) => [url, [...codes]]))).toEqual({
      '/health': [200],
      '/ready': [200],
      '/.well-known/jwks.json': [200],
    })
  }, 120_000)

  test("behavior: with TRUST_PROXY the limit follows the address the proxy forwards; without it, the socket's", async () => {
    const request = (api: TestApi, forwarded: string) =>
      api.app.inject({
        method: 'GET',
        url: '/eth/v1/redeems_info',
        remoteAddress: '10.0.0.2', // the load balancer
        headers: { 'x-forwarded-for': forwarded },
      })
    const proxied = await startApi({
      RATE_LIMIT_MAX: '2',
      RATE_LIMIT_WINDOW_MS: '60000',
      TRUST_PROXY: '10.0.0.0/8',
    })
    const statuses = async (api: TestApi, forwarded: string, n: number) => {
      const out: number[] = []
      for (let i = 0; i < n; i++) out.push((await request(api, forwarded)).statusCode === 429 ? 429 : 200)
      return out
    }
    expect(await statuses(proxied, '198.51.100.1', 3)).toEqual([200, 200, 429])
    expect(await statuses(proxied, '198.51.100.2', 2)).toEqual([200, 200]) // its own budget
    const direct = await startApi({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' })
    // untrusted: every forwarded address is the load balancer's one budget
    expect([
      ...(await statuses(direct, '198.51.100.1', 2)),
      ...(await statuses(direct, '198.51.100.2', 1)),
    ]).toEqual([200, 200, 429])
  })
})

describe('request timeouts', () => {
  /** Sends `head` then one byte of `drip` every 400 ms; resolves when the server closes the socket. */
  const slowClient = (url: string, head: string, drip: string) =>
    new Promise<{ ms: number; response: string }>((resolve) => {
      const { hostname, port } = new URL(url)
      const started = Date.now()
      let response = ''
      const socket = net.connect(Number(port), hostname, () => socket.write(head))
      const timer = setInterval(() => socket.write(drip), 400)
      socket.on('data', (chunk) => {
        response += chunk
      })
      socket.on('error', () => {})
      socket.on('close', () => {
        clearInterval(timer)
        resolve({ ms: Date.now() - started, response })
      })
    })

  test('behavior: a body sent a byte at a time, or headers that never end, are cut at REQUEST_TIMEOUT_MS (408)', async () => {
    const api = await startApi({ REQUEST_TIMEOUT_MS: '3000' })
    const body = await slowClient(
      api.url,
      'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
      ' ',
    )
    expect(body.response).toMatch(/^HTTP\/1\.1 408/)
    expect(body.ms).toBeGreaterThanOrEqual(2_900)
    expect(body.ms).toBeLessThan(3_000 + 2_500) // the bound plus Node's 1 s check interval
    const headers = await slowClient(api.url, 'GET /health HTTP/1.1\r\nHost: x\r\n', 'X')
    expect(headers.response).toMatch(/^HTTP\/1\.1 408/)
    expect(headers.ms).toBeLessThan(1_000 + 2_500) // a third of the bound for headers
  }, 30_000)
})

describe('client secrets', () => {
  test('behavior: a second secret works alongside the first; a revoked client gets 401 invalid_client', async () => {
    const api = await startApi()
    const org = await orgWithToken(api)
    const rotated = await addClientSecret(api.dbh.db, org.clientId)
    const token = (secret: string) =>
      http(api.url)('POST', '/oauth/token', {
        grant_type: 'client_credentials',
        audience: api.url,
        client_id: org.clientId,
        client_secret: secret,
      })
    expect((await token(org.clientSecret)).status).toBe(200)
    expect((await token(rotated.client_secret)).status).toBe(200)
    await revokeClient(api.dbh.db, org.clientId)
    const revoked = await token(rotated.client_secret)
    expect([revoked.status, revoked.body.error]).toEqual([401, 'invalid_client'])
  })
})
