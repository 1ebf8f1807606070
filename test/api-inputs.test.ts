import fs from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildApp } from '../api/app.ts'
import { openSigningKeys } from '../api/auth/signing-keys.ts'
import { ERROR_CATALOG } from '../api/errors.ts'
import { unboundedNumbers, unsafeInput } from '../api/schemas.ts'
import { loadConfig } from '../common/config.ts'
import { createLogger } from '../common/logger.ts'
import { openDb } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { type Backend, http, orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { postgresAvailable } from './helpers/services.ts'

/**
 * Issue 9's input defects, each over HTTP against the real app: strings Postgres cannot store, unbounded
 * integers, loose parsing (type coercion of bodies, content types, list syntax, address case), error bodies
 * outside the catalog, the zero address, discounts on removed accounts, request ids, the 429 message.
 */

const backends: Backend[] = ['pglite', 'postgres']
const pgOk = await postgresAvailable()

let addrSeq = 0xa11
const nextAddress = () => `0x${(addrSeq++).toString(16).padStart(40, '0')}`

/** `{message, status}` with a catalog code whose HTTP status is the response's. */
function expectCatalogBody(status: number, body: unknown) {
  expect(body).toEqual({ message: expect.any(String), status: expect.stringMatching(/^IR\d{4}$/) })
  const code = (body as { status: keyof typeof ERROR_CATALOG }).status
  expect(ERROR_CATALOG[code]?.http, `${code} is in the catalog with HTTP ${status}`).toBe(status)
}

/** Sends raw bytes over a socket and returns the status line, headers and body of the answer. */
function rawRequest(
  url: string,
  request: string | Buffer,
): Promise<{ status: number; head: string; body: string }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(request))
    let data = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => {
      data += chunk
    })
    socket.on('error', reject)
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n')
      resolve({ status: Number(head.split(' ')[1]), head, body })
    })
  })
}

describe('input rules (unit)', () => {
  test('behavior: NUL and lone surrogates are found anywhere, valid surrogate pairs pass', () => {
    expect(unsafeInput({ a: ['x', 'y\u0000'] }, 'body')).toBe(
      'body/a/1 must not contain NUL or lone surrogate characters',
    )
    expect(unsafeInput({ a: '\ud800' }, 'body')).toMatch(/body\/a/)
    expect(unsafeInput({ a: 'x\udc00' }, 'body')).toMatch(/body\/a/)
    expect(unsafeInput({ 'k\u0000': 1 }, 'body')).toMatch(/property name/)
    expect(unsafeInput({ a: 'emoji 😀 ok', b: [1, true, null] }, 'body')).toBeUndefined()
    let deep: unknown = 'x'
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(unsafeInput(deep, 'body')).toMatch(/nested deeper/)
  })

  test('behavior: a route with an unbounded integer is refused when it is registered', async () => {
    expect(
      unboundedNumbers({ type: 'object', properties: { n: { type: 'integer', minimum: 0 } } }, 'querystring'),
    ).toEqual(['querystring/n'])
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-inputs-'))
    const dbh = await openDb({})
    try {
      const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' })
      const logger = createLogger({ level: 'silent' })
      const signingKeys = await openSigningKeys({ db: dbh.db, config, logger })
      const app = await buildApp({ config, logger, db: dbh.db, signingKeys })
      expect(() =>
        app.get(
          '/unbounded',
          { schema: { querystring: Type.Object({ offset: Type.Integer({ minimum: 0 }) }) } },
          async () => 'never',
        ),
      ).toThrow(/GET \/unbounded: numbers without minimum and maximum: querystring\/offset/)
      await app.close()
    } finally {
      await dbh.close()
      await fs.rm(dataDir, { recursive: true, force: true })
    }
  })
})

describe.each(backends)('input rules over HTTP (%s)', (backend) => {
  const run = backend === 'pglite' || pgOk
  let api: TestApi
  let org: Awaited<ReturnType<typeof orgWithToken>>
  let call: ReturnType<typeof http>

  beforeAll(async () => {
    if (!run) return
    api = await startTestApi(backend, { RATE_LIMIT_MAX: '100000' })
    org = await orgWithToken(api, {
      scopes: 'read:platform write:platform read:sol-allowlist write:sol-allowlist read:eth-rewards',
    })
    call = http(api.url, org.token)
  })
  afterAll(async () => {
    await api?.close()
  })

  const createAccount = async () => {
    const res = await call('POST', '/v0/platform/accounts', {
      key: `k-${Math.random().toString(36).slice(2)}`,
    })
    expect(res.status).toBe(201)
    return res.body as { id: string; key: string }
  }
  const tables = async () => {
    const db = api.dbh.db
    return Promise.all(
      ['accounts', 'wallets', 'discount_rates', 'sol_allowlist', 'allowlist_changes'].map((t) =>
        db(t).count<{ count: string }[]>(),
      ),
    )
  }

  describe.runIf(run)('strings the database cannot store', () => {
    test('behavior: a NUL or a lone surrogate in a body, a path segment or a query is 400 before any query', async () => {
      const before = await tables()
      const account = await createAccount()
      const cases: [string, string, unknown?][] = [
        ['POST', '/v0/platform/accounts', { key: 'a\u0000b' }],
        ['POST', '/v0/platform/accounts', { key: 'lone \ud800 surrogate' }],
        ['POST', '/v0/platform/accounts', { key: 'lone \udfff low' }],
        ['GET', '/v0/platform/accounts/a%00b'],
        ['PATCH', '/v0/platform/accounts/a%00b/pause'],
        ['PATCH', `/v0/platform/accounts/${account.id}/wallets/0x%00/pause`],
        ['GET', '/v0/platform/accounts/a%00b/discount_rate'],
        ['GET', '/v0/platform/wallets/%00'],
        ['GET', '/eth/v1/rewards/accounts/a%00b/summary'],
        ['GET', '/eth/v1/redeems?owner=%00'],
        ['GET', '/sol/v0/allowlist/%00'],
        [
          'POST',
          `/v0/platform/accounts/${account.id}/wallets`,
          { address: nextAddress(), type: 'ETH\u0000' },
        ],
        ['POST', '/eth/v1/rewards/accounts', { accounts: ['a\u0000'], date: '2026-05-01' }],
      ]
      for (const [method, url, body] of cases) {
        const res = await call(method, url, body)
        const label = `${method} ${url} ${JSON.stringify(body)}`
        expect(res.status, label).toBe(400)
        expectCatalogBody(res.status, res.body)
      }
      expect((await tables())[0]).toEqual([{ count: String(Number(before[0]?.[0]?.count) + 1) }])
    })

    test('behavior: NUL in client_id on POST /oauth/token (unauthenticated) is 400 invalid_request, never 500', async () => {
      for (const body of [
        { grant_type: 'client_credentials', audience: api.url, client_id: 'x\u0000', client_secret: 's' },
        {
          grant_type: 'client_credentials',
          audience: api.url,
          client_id: org.clientId,
          client_secret: '\ud800',
        },
      ]) {
        const res = await http(api.url)('POST', '/oauth/token', body)
        expect(res.status).toBe(400)
        expect(res.body).toMatchObject({ error: 'invalid_request', status: 'IR1000' })
      }
      const form = await fetch(`${api.url}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: 'a\u0000',
          client_secret: 'b',
        }),
      })
      expect(form.status).toBe(400)
    })

    test('behavior: a NUL in a header never reaches a query (the parser or the guard refuses it)', async () => {
      // a token that may impersonate: the header passes the scope check and would be looked up
      const impersonator = await orgWithToken(api, { scopes: 'read:eth-rewards impersonate:org' })
      const raw = await rawRequest(
        api.url,
        `GET /eth/v1/platforms/2026-05-01 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${impersonator.token}\r\nImpersonate-Org: a\u0000b\r\n\r\n`,
      )
      expect(raw.status).toBe(400)
      expectCatalogBody(400, JSON.parse(raw.body))
      const injected = await api.app.inject({
        method: 'GET',
        url: '/eth/v1/platforms/2026-05-01',
        headers: { authorization: `Bearer ${impersonator.token}`, 'impersonate-org': 'a\ud800' },
      })
      expect(injected.statusCode).toBe(400)
      expectCatalogBody(400, injected.json())
    })
  })

  describe.runIf(run)('integers', () => {
    test('behavior: out-of-range integers in queries and paths are 400, never a database error', async () => {
      for (const offset of [
        '9223372036854775807',
        '1e19',
        '99999999999999999999',
        '2147483648',
        '-1',
        '1.5',
      ]) {
        const res = await call('GET', `/v0/platform/wallets?offset=${offset}`)
        expect(res.status, offset).toBe(400)
        expectCatalogBody(400, res.body)
      }
      expect((await call('GET', '/v0/platform/wallets?offset=2147483647')).status).toBe(200)
      for (const idx of ['4294967296', '99999999999999999999', '1e3', '-1']) {
        const res = await call('GET', `/eth/v1/redeems/${idx}`)
        expect(res.status, idx).toBe(400)
      }
      const ids = await call('GET', '/eth/v1/redeems?ids=99999999999')
      expect(ids.status).toBe(400)
    })
  })

  describe.runIf(run)('loose parsing', () => {
    test('behavior: bodies are not coerced: a number or boolean key, a null allowlisted are 400', async () => {
      for (const key of [12, true, null, ['k']]) {
        const res = await call('POST', '/v0/platform/accounts', { key })
        expect(res.status, JSON.stringify(key)).toBe(400)
        expectCatalogBody(400, res.body)
      }
      expect(await api.dbh.db('accounts').whereIn('key', ['12', 'true', 'k']).count()).toEqual([
        { count: '0' },
      ])
      const account = await createAccount()
      for (const allowlisted of [null, 1, 'yes', ['true']]) {
        const res = await call('POST', `/v0/platform/accounts/${account.id}/wallets`, {
          address: nextAddress(),
          type: 'ETH',
          allowlisted,
        })
        expect(res.status, JSON.stringify(allowlisted)).toBe(400)
      }
      expect(await api.dbh.db('wallets').where({ account_id: account.id }).count()).toEqual([{ count: '0' }])
      // the documented forms still work: booleans and the strings "true"/"false"
      for (const allowlisted of [false, 'false']) {
        const res = await call('POST', `/v0/platform/accounts/${account.id}/wallets`, {
          address: nextAddress(),
          type: 'ETH',
          allowlisted,
        })
        expect(res.status).toBe(200)
      }
    })

    test('behavior: target_fee_rate takes a plain decimal: " 0.1", "1e-3", "0x1", "" are 400', async () => {
      const account = await createAccount()
      for (const bad of [' 0.1', '0.1 ', '1e-3', '0x1', '', '.5', '+0.1', true, null]) {
        const res = await call('POST', `/v0/platform/accounts/${account.id}/discount_rate`, {
          target_fee_rate: bad,
        })
        expect(res.status, JSON.stringify(bad)).toBe(400)
      }
      expect(await api.dbh.db('discount_rates').where({ account_id: account.id }).count()).toEqual([
        { count: '0' },
      ])
      const ok = await call('POST', `/v0/platform/accounts/${account.id}/discount_rate`, {
        target_fee_rate: '0.05',
      })
      expect(ok.status).toBe(200)
    })

    test('behavior: path and query integers are digits only: /eth/v1/redeems/0x1 and ids=1,,2 are 400', async () => {
      for (const url of [
        '/eth/v1/redeems/0x1',
        '/eth/v1/redeems/%201',
        '/eth/v0/redeems/1.0',
        '/eth/v1/redeems?ids=1,,2',
        '/eth/v1/redeems?ids=1,2,',
        '/eth/v1/redeems?ids=,',
        '/eth/v1/redeems?owner=0x0000000000000000000000000000000000000001,,',
        '/v0/platform/wallets?limit=0x10',
        '/v0/platform/wallets?allowlist=1',
      ]) {
        const res = await call('GET', url)
        expect(res.status, url).toBe(400)
        expectCatalogBody(400, res.body)
      }
      expect((await call('GET', '/eth/v1/redeems?ids=1,2')).status).toBe(200)
      expect((await call('GET', '/v0/platform/wallets?limit=10&allowlist=true')).status).toBe(200)
    })

    test('behavior: only JSON is parsed on JSON routes: form, text/plain and XML bodies are 415 IR1003', async () => {
      const send = (type: string, body: string) =>
        fetch(`${api.url}/v0/platform/accounts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${org.token}`, 'content-type': type },
          body,
        })
      for (const [type, body] of [
        ['application/x-www-form-urlencoded', 'key=form-key'],
        ['text/plain', '{"key":"plain-key"}'],
        ['application/xml', '<key>xml-key</key>'],
        ['multipart/form-data; boundary=x', '--x--'],
      ] as const) {
        const res = await send(type, body)
        expect(res.status, type).toBe(415)
        expect(await res.json()).toEqual({ message: expect.any(String), status: 'IR1003' })
      }
      expect(
        await api.dbh.db('accounts').whereIn('key', ['form-key', 'plain-key', 'xml-key']).count(),
      ).toEqual([{ count: '0' }])
      // the token endpoint still takes forms (RFC 6749)
      const token = await fetch(`${api.url}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          audience: api.url,
          client_id: org.clientId,
          client_secret: org.clientSecret,
        }),
      })
      expect(token.status).toBe(200)
    })

    test('behavior: client_secret as an array is 400 invalid_request (no array-to-string coercion)', async () => {
      const res = await http(api.url)('POST', '/oauth/token', {
        grant_type: 'client_credentials',
        audience: api.url,
        client_id: org.clientId,
        client_secret: [org.clientSecret],
      })
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ error: 'invalid_request', status: 'IR1000' })
    })

    test('behavior: a malformed /oauth/token body answers with the RFC 6749 error field', async () => {
      const res = await http(api.url)('POST', '/oauth/token', '{"grant_type":')
      expect(res.status).toBe(400)
      expect(res.body).toEqual({
        error: 'invalid_request',
        error_description: 'malformed JSON body',
        message: 'malformed JSON body',
        status: 'IR1001',
      })
    })

    test('behavior: an all-uppercase hex address is accepted (one case is not mixed case)', async () => {
      const account = await createAccount()
      const upper = `0x${'ABCDEF0123456789ABCDEF0123456789ABCD'.padStart(40, 'E')}`
      const res = await call('POST', `/v0/platform/accounts/${account.id}/wallets`, {
        address: upper,
        type: 'ETH',
        allowlisted: false,
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.address).toBe(upper.toLowerCase())
      expect((await call('GET', `/v0/platform/wallets/${upper}`)).status).toBe(200)
      const bad = await call('POST', `/v0/platform/accounts/${account.id}/wallets`, {
        address: '0x8C1BEd5b9a0928467c9B1341Da1D7BD5e10b6549',
        type: 'ETH',
      })
      expect([bad.status, bad.body.status]).toEqual([400, 'IR3102'])
    })
  })

  describe.runIf(run)('error bodies', () => {
    test('behavior: an oversized query string is 431 with the catalog body (IR1007)', async () => {
      const raw = await rawRequest(
        api.url,
        `GET /v0/platform/wallets?owner=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      )
      expect(raw.status).toBe(431)
      expect(JSON.parse(raw.body)).toEqual({ message: expect.stringMatching(/16 KiB/), status: 'IR1007' })
      expect(raw.head.toLowerCase()).toContain('x-request-id:')
    })

    test('behavior: malformed HTTP, a bad percent-encoding and an over-long path segment answer catalog bodies', async () => {
      const garbage = await rawRequest(api.url, 'NOT HTTP AT ALL\r\n\r\n')
      expect(garbage.status).toBe(400)
      expectCatalogBody(400, JSON.parse(garbage.body))
      for (const url of ['/v0/platform/accounts/%E0%A4%A', `/v0/platform/accounts/${'k'.repeat(5000)}`]) {
        const res = await call('GET', url)
        expect(res.status, url.slice(0, 40)).toBe(400)
        expectCatalogBody(400, res.body)
      }
    })
  })

  describe.runIf(run)('wallets, discounts, request ids, rate limit', () => {
    test('behavior: the zero address is refused as a wallet (400 IR3107)', async () => {
      const account = await createAccount()
      for (const address of ['0x0000000000000000000000000000000000000000', `0X${'0'.repeat(40)}`]) {
        const res = await call('POST', `/v0/platform/accounts/${account.id}/wallets`, {
          address,
          type: 'ETH',
        })
        expect(res.status).toBe(400)
        expectCatalogBody(400, res.body)
      }
      const zero = await call('POST', `/v0/platform/accounts/${account.id}/wallets`, {
        address: '0x0000000000000000000000000000000000000000',
        type: 'ETH',
      })
      expect(zero.body.status).toBe('IR3107')
      expect(await createRepos(api.dbh.db).wallets.listByAccounts([account.id])).toEqual([])
    })

    test('behavior: a discount rate on a REMOVED account is 400 IR3005 and records nothing', async () => {
      const account = await createAccount()
      expect((await call('PATCH', `/v0/platform/accounts/${account.id}/remove`)).status).toBe(200)
      const res = await call('POST', `/v0/platform/accounts/${account.id}/discount_rate`, {
        target_fee_rate: '0.05',
      })
      expect([res.status, res.body.status]).toEqual([400, 'IR3005'])
      expect(await api.dbh.db('discount_rates').where({ account_id: account.id }).count()).toEqual([
        { count: '0' },
      ])
    })

    test('behavior: x-request-id is echoed only when it is at most 128 characters of [A-Za-z0-9._-]', async () => {
      const id = async (value: string) =>
        (await fetch(`${api.url}/health`, { headers: { 'x-request-id': value } })).headers.get('x-request-id')
      expect(await id('req-1.2_3')).toBe('req-1.2_3')
      expect(await id('a'.repeat(128))).toBe('a'.repeat(128))
      for (const bad of ['a'.repeat(129), 'x'.repeat(10_000), 'a b', '<script>', 'a;b', 'é']) {
        const got = await id(bad)
        expect(got, bad.slice(0, 20)).not.toBe(bad)
        expect(got).toMatch(/^[0-9a-f-]{36}$/)
      }
    })
  })
})

describe('rate limit message', () => {
  test('behavior: the 429 message states the window and the time remaining, as Retry-After does', async () => {
    const api = await startTestApi('pglite', { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' })
    try {
      const org = await orgWithToken(api)
      const call = http(api.url, org.token)
      await call('GET', '/v0/platform/accounts')
      await call('GET', '/v0/platform/accounts')
      const limited = await call('GET', '/v0/platform/accounts')
      expect(limited.status).toBe(429)
      const retryAfter = Number(limited.headers.get('retry-after'))
      expect(retryAfter).toBeGreaterThan(0)
      expect(limited.body).toEqual({
        message: `rate limit exceeded: at most 2 requests per 60 s; retry in ${retryAfter} s`,
        status: 'IR1005',
      })
    } finally {
      await api.close()
    }
  })
})
