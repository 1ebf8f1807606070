/**
 * Inputs that could shadow or blur another tenant's data (issue 22), over HTTP on the embedded backend and on
 * Postgres: account keys (UUID-shaped, invisible and format characters, NFC), duplicate JSON keys, paged account
 * lists, and the view that lists keys made before the rules.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, test } from 'vitest'
import { createRepos } from '../db/repos/index.ts'
import { type Backend, http, orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { postgresAvailable } from './helpers/services.ts'

const backends: Backend[] = (await postgresAvailable()) ? ['pglite', 'postgres'] : ['pglite']
const apis: TestApi[] = []
afterAll(async () => {
  for (const api of apis) await api.close()
})

describe.each(backends)('account keys and bodies (%s)', (backend) => {
  const start = async () => {
    const api = await startTestApi(backend)
    apis.push(api)
    const org = await orgWithToken(api)
    return { api, org, call: http(api.url, org.token) }
  }

  test('behavior: a key shaped like a UUID, or holding invisible, control or format characters, is 400 IR3001', async () => {
    const { call } = await start()
    const id = randomUUID()
    for (const key of [id, id.toUpperCase(), '\u200b', 'abc\u202egpj.exe', 'tab\tkey', 'bom\ufeff']) {
      const res = await call('POST', '/v0/platform/accounts', { key })
      expect(res.status, JSON.stringify(key)).toBe(400)
      expect(res.body).toEqual({ message: expect.stringMatching(/^key must not/), status: 'IR3001' })
    }
  })

  test('behavior: keys are NFC-normalized: the decomposed form of a key is the same key, for creation and lookup', async () => {
    const { call } = await start()
    const composed = await call('POST', '/v0/platform/accounts', { key: 'caf\u00e9' })
    expect(composed.status).toBe(201)
    const decomposed = await call('POST', '/v0/platform/accounts', { key: 'cafe\u0301' })
    expect(decomposed.status).toBe(400)
    expect(decomposed.body.status).toBe('IR3002')
    const found = await call('GET', `/v0/platform/accounts/${encodeURIComponent('cafe\u0301')}`)
    expect(found.status).toBe(200)
    expect(found.body.id).toBe(composed.body.id)
    expect(found.body.key).toBe('caf\u00e9')
  })

  test('behavior: a JSON body with a key twice is 400 IR1001 naming the key; nothing is created', async () => {
    const { call } = await start()
    const res = await call('POST', '/v0/platform/accounts', '{"key":"first","key":"second"}')
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ message: 'JSON body has the key "key" twice', status: 'IR1001' })
    const list = await call('GET', '/v0/platform/accounts')
    expect(list.body).toEqual([])
  })

  test('behavior: the accounts list is paged (limit, offset, X-Total-Count); a page over 1000 is 400', async () => {
    const { call } = await start()
    for (const key of ['a', 'b', 'c'])
      expect((await call('POST', '/v0/platform/accounts', { key })).status).toBe(201)
    const first = await call('GET', '/v0/platform/accounts?limit=2')
    expect(first.body.map((a: { key: string }) => a.key)).toEqual(['a', 'b'])
    expect(first.headers.get('x-total-count')).toBe('3')
    const rest = await call('GET', '/v0/platform/accounts?limit=2&offset=2')
    expect(rest.body.map((a: { key: string }) => a.key)).toEqual(['c'])
    expect((await call('GET', '/v0/platform/accounts?limit=1001')).status).toBe(400)
    // an account's wallets are paged the same way
    for (const n of [1, 2, 3]) {
      const address = `0x${n.toString(16).padStart(40, '0')}`
      const res = await call('POST', '/v0/platform/accounts/a/wallets', {
        address,
        type: 'ETH',
        allowlisted: false,
      })
      expect(res.status).toBe(200)
    }
    const wallets = await call('GET', '/v0/platform/accounts/a/wallets?limit=2&offset=1')
    expect(wallets.body.map((w: { address: string }) => w.address)).toEqual([
      `0x${'2'.padStart(40, '0')}`,
      `0x${'3'.padStart(40, '0')}`,
    ])
    expect(wallets.headers.get('x-total-count')).toBe('3')
  })

  test("behavior: an address taken by any platform is refused with the same words whether it is the caller's or another's (IR3103), naming no account or organization", async () => {
    const { api, call } = await start()
    const other = await orgWithToken(api, { name: 'Other Platform' })
    const callOther = http(api.url, other.token)
    const address = '0x00000000000000000000000000000000000b0b01'
    for (const [c, key] of [
      [call, 'owner'],
      [call, 'second'],
      [callOther, 'foreign'],
    ] as const) {
      expect((await c('POST', '/v0/platform/accounts', { key })).status).toBe(201)
    }
    const attach = (c: typeof call, key: string) =>
      c('POST', `/v0/platform/accounts/${key}/wallets`, { address, type: 'ETH', allowlisted: false })
    expect((await attach(call, 'owner')).status).toBe(200)
    const own = await attach(call, 'second')
    const foreign = await attach(callOther, 'foreign')
    expect([own.status, own.body.status]).toEqual([400, 'IR3103'])
    expect(foreign.body).toEqual(own.body)
    expect(own.body.message).not.toMatch(/owner|second|foreign|Other Platform|org_/)
  })

  test('behavior: keys made before the rules are listed in account_key_problems, never changed', async () => {
    const { api, org } = await start()
    const repos = createRepos(api.dbh.db)
    const uuidKey = randomUUID()
    await repos.accounts.insert({ id: randomUUID(), orgId: org.orgId, key: uuidKey })
    await repos.accounts.insert({ id: randomUUID(), orgId: org.orgId, key: 'caf\u00e9' })
    await repos.accounts.insert({ id: randomUUID(), orgId: org.orgId, key: 'cafe\u0301' })
    await repos.accounts.insert({ id: randomUUID(), orgId: org.orgId, key: 'zero\u200bwidth' })
    await repos.accounts.insert({ id: randomUUID(), orgId: org.orgId, key: 'fine' })
    const problems = await api.dbh
      .db('account_key_problems')
      .where({ org_id: org.orgId })
      .select('key', 'problem')
      .orderBy(['key', 'problem'])
    expect(problems).toEqual(
      [
        { key: uuidKey, problem: 'shaped like a UUID' },
        { key: 'caf\u00e9', problem: 'equal to another key of the organization once NFC-normalized' },
        { key: 'cafe\u0301', problem: 'equal to another key of the organization once NFC-normalized' },
        { key: 'cafe\u0301', problem: 'not NFC-normalized' },
        { key: 'zero\u200bwidth', problem: 'control or format characters' },
      ].sort((x, y) => (x.key === y.key ? (x.problem < y.problem ? -1 : 1) : x.key < y.key ? -1 : 1)),
    )
  })
})
