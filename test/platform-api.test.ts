import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { signingKeyFromPem } from '../api/auth/keys.ts'
import { issueToken } from '../api/auth/tokens.ts'
import { denyAccount } from '../cli/admin.ts'
import { createRepos } from '../db/repos/index.ts'
import { type Backend, http, orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { postgresAvailable } from './helpers/services.ts'

const backends: Backend[] = ['pglite', 'postgres']
const pgOk = await postgresAvailable()

const CHECKSUMMED = '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549'
let addrSeq = 1
/** A fresh lower-case address. */
const nextAddress = () => `0x${(addrSeq++).toString(16).padStart(40, '0')}`

describe.each(backends)('platform API over HTTP (%s)', (backend) => {
  const run = backend === 'pglite' || pgOk
  let api: TestApi
  let org: Awaited<ReturnType<typeof orgWithToken>>
  let call: ReturnType<typeof http>

  beforeAll(async () => {
    if (!run) return
    api = await startTestApi(backend)
    org = await orgWithToken(api)
    call = http(api.url, org.token)
  })
  afterAll(async () => {
    await api?.close()
  })

  const createAccount = async (key = `user-${Math.random().toString(36).slice(2)}`) => {
    const res = await call('POST', '/v0/platform/accounts', { key })
    expect(res.status).toBe(201)
    return res.body as { id: string; key: string; status: string }
  }
  const createWallet = async (accountId: string, body: Record<string, unknown> = {}) => {
    const res = await call('POST', `/v0/platform/accounts/${accountId}/wallets`, {
      address: nextAddress(),
      type: 'ETH',
      ...body,
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body as {
      id: string
      address: string
      status: string
      allowlisted: boolean
      on_platform: boolean
    }
  }

  describe.runIf(run)('token endpoint', () => {
    test('behavior: JSON client credentials give an ES256 JWT with the documented claims', async () => {
      const res = await http(api.url)('POST', '/oauth/token', {
        grant_type: 'client_credentials',
        audience: api.url,
        client_id: org.clientId,
        client_secret: org.clientSecret,
      })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 86400 })
      expect(res.body.scope).toBe('read:platform write:platform read:sol-allowlist write:sol-allowlist')
      const claims = decodeJwt(res.body.access_token)
      expect(Object.keys(claims).sort()).toEqual([
        'aud',
        'exp',
        'iat',
        'iss',
        'jti',
        'org_id',
        'scope',
        'sub',
      ])
      expect(claims).toMatchObject({ iss: api.url, aud: api.url, sub: org.clientId, org_id: org.orgId })
      expect(claims.exp! - claims.iat!).toBe(86400)
      const jwks = (await http(api.url)('GET', '/.well-known/jwks.json')).body
      const verified = await jwtVerify(res.body.access_token, createLocalJWKSet(jwks), {
        algorithms: ['ES256'],
      })
      expect(verified.protectedHeader.alg).toBe('ES256')
    })

    test('behavior: form-encoded bodies and HTTP Basic client auth are accepted', async () => {
      const form = new URLSearchParams({
        grant_type: 'client_credentials',
        audience: api.url,
        client_id: org.clientId,
        client_secret: org.clientSecret,
      })
      const a = await fetch(`${api.url}/oauth/token`, { method: 'POST', body: form })
      expect(a.status).toBe(200)
      const basic = Buffer.from(`${org.clientId}:${org.clientSecret}`).toString('base64')
      const b = await fetch(`${api.url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', audience: api.url }),
      })
      expect(b.status).toBe(200)
    })

    test.each([
      ['wrong secret', { client_secret: 'nope' }, 401, 'invalid_client', 'IR2005'],
      ['unknown client', { client_id: 'cl_unknown' }, 401, 'invalid_client', 'IR2005'],
      ['wrong grant', { grant_type: 'password' }, 400, 'unsupported_grant_type', 'IR2006'],
      ['wrong audience', { audience: 'https://elsewhere.example' }, 400, 'invalid_request', 'IR2004'],
      ['missing grant', { grant_type: undefined }, 400, 'invalid_request', 'IR2004'],
      ['scope not granted', { scope: 'impersonate:org' }, 400, 'invalid_scope', 'IR2007'],
    ])('behavior: %s gives the RFC 6749 error body', async (_name, override, status, error, code) => {
      const body = {
        grant_type: 'client_credentials',
        audience: api.url,
        client_id: org.clientId,
        client_secret: org.clientSecret,
        ...override,
      }
      const res = await http(api.url)('POST', '/oauth/token', JSON.parse(JSON.stringify(body)))
      expect(res.status).toBe(status)
      expect(res.body).toMatchObject({ error, status: code })
      expect(typeof res.body.error_description).toBe('string')
      expect(typeof res.body.message).toBe('string')
    })
  })

  describe.runIf(run)('bearer tokens and scopes', () => {
    test('behavior: no token is 401 IR2000, a garbage token 401 IR2001', async () => {
      expect((await http(api.url)('GET', '/v0/platform/accounts')).body).toEqual({
        message: expect.any(String),
        status: 'IR2000',
      })
      const bad = await http(api.url, 'not.a.jwt')('GET', '/v0/platform/accounts')
      expect([bad.status, bad.body.status]).toEqual([401, 'IR2001'])
    })

    test('behavior: an expired token is 401 and a token for another audience is 401', async () => {
      const key = await api.signingKeys.current()
      const base = { issuer: api.url, clientId: org.clientId, orgId: org.orgId, scopes: ['read:platform'] }
      const expired = await issueToken(key, {
        ...base,
        audience: api.url,
        now: Math.floor(Date.now() / 1000) - 90_000,
      })
      const res = await http(api.url, expired)('GET', '/v0/platform/accounts')
      expect([res.status, res.body.status]).toEqual([401, 'IR2001'])
      expect(res.body.message).toMatch(/expired/)
      const otherAud = await issueToken(key, { ...base, audience: 'https://other.example' })
      expect((await http(api.url, otherAud)('GET', '/v0/platform/accounts')).status).toBe(401)
    })

    test('behavior: a token that worked is refused once it expires (verified tokens are cached, expiry is not)', async () => {
      const key = await api.signingKeys.current()
      const now = Math.floor(Date.now() / 1000)
      const shortLived = await issueToken(key, {
        issuer: api.url,
        audience: api.url,
        clientId: org.clientId,
        orgId: org.orgId,
        scopes: ['read:platform'],
        now: now - 86_400 + 2, // expires in about 2 s
      })
      expect((await http(api.url, shortLived)('GET', '/v0/platform/accounts')).status).toBe(200)
      await new Promise((r) => setTimeout(r, 3_100))
      const late = await http(api.url, shortLived)('GET', '/v0/platform/accounts')
      expect([late.status, late.body.status]).toEqual([401, 'IR2001'])
      expect(late.body.message).toMatch(/expired/)
    })

    test('behavior: a token signed by another key is 401', async () => {
      const { generateKeyPair, exportPKCS8 } = await import('jose')
      const { privateKey } = await generateKeyPair('ES256', { extractable: true })
      const other = await signingKeyFromPem(await exportPKCS8(privateKey))
      const forged = await issueToken(other, {
        issuer: api.url,
        audience: api.url,
        clientId: org.clientId,
        orgId: org.orgId,
        scopes: ['read:platform'],
      })
      expect((await http(api.url, forged)('GET', '/v0/platform/accounts')).status).toBe(401)
    })

    test('behavior: a valid token without the scope is 403 IR2002', async () => {
      const reader = await orgWithToken(api, { scopes: 'read:platform' })
      const res = await http(api.url, reader.token)('POST', '/v0/platform/accounts', { key: 'k' })
      expect([res.status, res.body.status]).toEqual([403, 'IR2002'])
      const sol = await http(api.url, reader.token)(
        'GET',
        '/sol/v0/allowlist/11111111111111111111111111111111',
      )
      expect([sol.status, sol.body.status]).toEqual([403, 'IR2002'])
    })
  })

  describe.runIf(run)('accounts', () => {
    test('behavior: create returns 201 with the Account shape and an empty wallets array', async () => {
      const res = await call('POST', '/v0/platform/accounts', { key: 'alice' })
      expect(res.status).toBe(201)
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        key: 'alice',
        org_id: org.orgId,
        status: 'ACTIVE',
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/),
        wallets: [],
      })
    })

    test.each([
      ['empty key', { key: '' }, 'IR3001'],
      ['blank key', { key: '   ' }, 'IR3001'],
      ['key over 256 chars', { key: 'x'.repeat(257) }, 'IR3001'],
      ['missing key', {}, 'IR1000'],
    ])('behavior: %s is 400', async (_name, body, code) => {
      const res = await call('POST', '/v0/platform/accounts', body)
      expect([res.status, res.body.status]).toEqual([400, code])
      if (code === 'IR1000') expect(res.body.message).toMatch(/key/)
    })

    test('behavior: a duplicate key is 400 IR3002 in the same org, allowed in another org', async () => {
      await createAccount('dup-key')
      const dup = await call('POST', '/v0/platform/accounts', { key: 'dup-key' })
      expect([dup.status, dup.body.status]).toEqual([400, 'IR3002'])
      const other = await orgWithToken(api)
      expect(
        (await http(api.url, other.token)('POST', '/v0/platform/accounts', { key: 'dup-key' })).status,
      ).toBe(201)
    })

    test('behavior: get by id or key, list with wallets, unknown is 404 IR3000', async () => {
      const account = await createAccount()
      const wallet = await createWallet(account.id)
      const byId = await call('GET', `/v0/platform/accounts/${account.id}`)
      const byKey = await call('GET', `/v0/platform/accounts/${encodeURIComponent(account.key)}`)
      expect(byId.status).toBe(200)
      expect(byKey.body).toEqual(byId.body)
      expect(byId.body.wallets.map((w: { id: string }) => w.id)).toEqual([wallet.id])
      const list = await call('GET', '/v0/platform/accounts')
      const listed = list.body.find((a: { id: string }) => a.id === account.id)
      expect(listed).toEqual(byId.body)
      const missing = await call('GET', '/v0/platform/accounts/no-such-account')
      expect([missing.status, missing.body.status]).toEqual([404, 'IR3000'])
      const missingPatch = await call('PATCH', '/v0/platform/accounts/no-such-account/pause')
      expect([missingPatch.status, missingPatch.body.status]).toEqual([404, 'IR3000'])
    })

    const toState = async (state: 'ACTIVE' | 'PAUSED' | 'REMOVED' | 'DENIED') => {
      const account = await createAccount()
      if (state === 'PAUSED')
        expect((await call('PATCH', `/v0/platform/accounts/${account.id}/pause`)).status).toBe(200)
      if (state === 'REMOVED')
        expect((await call('PATCH', `/v0/platform/accounts/${account.id}/remove`)).status).toBe(200)
      if (state === 'DENIED') await denyAccount(api.dbh.db, { orgId: org.orgId, account: account.id })
      return account
    }
    const table: [string, string, string | undefined][] = [
      ['ACTIVE', 'pause', 'PAUSED'],
      ['PAUSED', 'pause', 'PAUSED'],
      ['REMOVED', 'pause', undefined],
      ['DENIED', 'pause', undefined],
      ['ACTIVE', 'remove', 'REMOVED'],
      ['PAUSED', 'remove', 'REMOVED'],
      ['DENIED', 'remove', 'REMOVED'],
      ['REMOVED', 'remove', 'REMOVED'],
      ['PAUSED', 'reactivate', 'ACTIVE'],
      ['ACTIVE', 'reactivate', 'ACTIVE'],
      ['REMOVED', 'reactivate', undefined],
      ['DENIED', 'reactivate', undefined],
    ]
    test.each(table)('behavior: from %s, %s gives %s (undefined: 400 IR3003)', async (from, action, to) => {
      const account = await toState(from as 'ACTIVE')
      const res = await call('PATCH', `/v0/platform/accounts/${account.key}/${action}`)
      if (to === undefined) {
        expect([res.status, res.body.status]).toEqual([400, 'IR3003'])
        expect((await call('GET', `/v0/platform/accounts/${account.id}`)).body.status).toBe(from)
      } else {
        expect(res.status).toBe(200)
        expect(res.body.status).toBe(to)
      }
    })

    test('behavior: pause takes live wallets off the Allowlist; reactivate brings them back; remove clears them', async () => {
      const account = await createAccount()
      const w1 = await createWallet(account.id)
      const w2 = await createWallet(account.id, { allowlisted: false })
      const paused = await call('PATCH', `/v0/platform/accounts/${account.id}/pause`)
      expect(paused.body.wallets.map((w: { status: string }) => w.status)).toEqual(['PAUSED', 'PAUSED'])
      const refused = await call('POST', `/v0/platform/accounts/${account.id}/wallets`, {
        address: nextAddress(),
        type: 'ETH',
      })
      expect([refused.status, refused.body.status]).toEqual([400, 'IR3004'])
      const repos = createRepos(api.dbh.db)
      expect((await repos.allowlistChanges.forWallet(w1.id)).map((c) => [c.permissions, c.state])).toEqual([
        ['5', 'superseded'],
        ['0', 'pending'],
      ])
      const back = await call('PATCH', `/v0/platform/accounts/${account.id}/reactivate`)
      expect(back.body.wallets.map((w: { status: string }) => w.status)).toEqual([
        'NOT_READY',
        'NOT_ALLOWLISTED',
      ])
      expect((await repos.allowlistChanges.forWallet(w1.id)).at(-1)?.permissions).toBe('5')
      expect(await repos.allowlistChanges.forWallet(w2.id)).toEqual([])
      const removed = await call('PATCH', `/v0/platform/accounts/${account.id}/remove`)
      expect(
        removed.body.wallets.map((w: { status: string; on_platform: boolean }) => [w.status, w.on_platform]),
      ).toEqual([
        ['PENDING_REMOVAL', false],
        ['REMOVED', false],
      ])
      const audit = await repos.audit.list('account', account.id)
      expect(audit.map((a) => [a.from_status, a.to_status, a.actor])).toEqual([
        [null, 'ACTIVE', org.clientId],
        ['ACTIVE', 'PAUSED', org.clientId],
        ['PAUSED', 'ACTIVE', org.clientId],
        ['ACTIVE', 'REMOVED', org.clientId],
      ])
    })
  })

  describe.runIf(run)('wallets', () => {
    test('behavior: an allowlisted wallet starts NOT_READY and on platform, with a pending DEPOSIT|REDEEM change', async () => {
      const account = await createAccount()
      const res = await call('POST', `/v0/platform/accounts/${account.id}/wallets`, {
        address: CHECKSUMMED,
        type: 'ETH',
      })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        account_id: account.id,
        address: CHECKSUMMED.toLowerCase(),
        type: 'ETH',
        allowlisted: false,
        on_platform: true,
        originator_org_id: org.orgId,
        status: 'NOT_READY',
        status_reason: null,
        created_at: expect.any(String),
      })
      const changes = await createRepos(api.dbh.db).allowlistChanges.forWallet(res.body.id)
      expect(changes.map((c) => [c.address, c.permissions, c.state])).toEqual([
        [CHECKSUMMED.toLowerCase(), '5', 'pending'],
      ])
    })

    test.each([
      [false, 'NOT_ALLOWLISTED'],
      ['false', 'NOT_ALLOWLISTED'],
      [true, 'NOT_READY'],
      ['true', 'NOT_READY'],
    ])('behavior: allowlisted %j gives %s', async (allowlisted, status) => {
      const account = await createAccount()
      const wallet = await createWallet(account.id, { allowlisted })
      expect([wallet.status, wallet.on_platform, wallet.allowlisted]).toEqual([status, true, false])
    })

    test.each([
      ['not hex', { address: '0xZZ' }, 400, 'IR3101'],
      ['too short', { address: '0x1234' }, 400, 'IR3101'],
      ['no 0x', { address: '8c1bed5b9a0928467c9b1341da1d7bd5e10b6549' }, 400, 'IR3101'],
      ['bad checksum', { address: '0x8C1BEd5b9a0928467c9B1341Da1D7BD5e10b6549' }, 400, 'IR3102'],
      ['type BTC', { type: 'BTC' }, 400, 'IR3106'],
      ['allowlisted "yes"', { allowlisted: 'yes' }, 400, 'IR1000'],
      ['missing type', { type: undefined }, 400, 'IR1000'],
    ])('behavior: %s is refused', async (_name, override, status, code) => {
      const account = await createAccount()
      const body = JSON.parse(JSON.stringify({ address: nextAddress(), type: 'ETH', ...override }))
      const res = await call('POST', `/v0/platform/accounts/${account.id}/wallets`, body)
      expect([res.status, res.body.status]).toEqual([status, code])
    })

    test('behavior: an address is attached once across all orgs (400 IR3103), in any case', async () => {
      const account = await createAccount()
      const address = nextAddress()
      await createWallet(account.id, { address })
      const other = await orgWithToken(api)
      const otherAccount = await http(api.url, other.token)('POST', '/v0/platform/accounts', { key: 'x' })
      const res = await http(api.url, other.token)(
        'POST',
        `/v0/platform/accounts/${otherAccount.body.id}/wallets`,
        {
          address: address.toUpperCase().replace('0X', '0x'),
          type: 'ETH',
        },
      )
      expect([res.status, res.body.status]).toEqual([400, 'IR3103'])
    })

    test('behavior: an org not permitted to allowlist gets 403 for allowlisted=true and may add on-platform wallets', async () => {
      const secondary = await orgWithToken(api, { canAllowlist: false })
      const c = http(api.url, secondary.token)
      const account = (await c('POST', '/v0/platform/accounts', { key: 'omnibus' })).body
      const denied = await c('POST', `/v0/platform/accounts/${account.id}/wallets`, {
        address: nextAddress(),
        type: 'ETH',
      })
      expect([denied.status, denied.body.status]).toEqual([403, 'IR3104'])
      const ok = await c('POST', `/v0/platform/accounts/${account.id}/wallets`, {
        address: nextAddress(),
        type: 'ETH',
        allowlisted: 'false',
      })
      expect([ok.status, ok.body.status]).toEqual([200, 'NOT_ALLOWLISTED'])
    })

    test('behavior: a wallet under an unknown account is 404', async () => {
      const res = await call('POST', '/v0/platform/accounts/nobody/wallets', {
        address: nextAddress(),
        type: 'ETH',
      })
      expect([res.status, res.body.status]).toEqual([404, 'IR3000'])
    })

    test('behavior: get by id or address (any case); unknown 404 IR3100; malformed 400', async () => {
      const account = await createAccount()
      const wallet = await createWallet(account.id)
      const byId = await call('GET', `/v0/platform/wallets/${wallet.id}`)
      const byAddress = await call('GET', `/v0/platform/wallets/${wallet.address}`)
      expect(byId.status).toBe(200)
      expect(byAddress.body).toEqual(byId.body)
      const missing = await call('GET', `/v0/platform/wallets/${nextAddress()}`)
      expect([missing.status, missing.body.status]).toEqual([404, 'IR3100'])
      const malformed = await call('GET', '/v0/platform/wallets/0x123')
      expect([malformed.status, malformed.body.status]).toEqual([400, 'IR3101'])
      const junk = await call('GET', '/v0/platform/wallets/hello')
      expect([junk.status, junk.body.status]).toEqual([400, 'IR1000'])
      const accountWallets = await call('GET', `/v0/platform/accounts/${account.key}/wallets`)
      expect(accountWallets.body).toEqual([byId.body])
    })

    test('behavior: list paginates by offset/limit with X-Total-Count and filters by allowlist/on_platform', async () => {
      const pager = await orgWithToken(api)
      const c = http(api.url, pager.token)
      const account = (await c('POST', '/v0/platform/accounts', { key: 'many' })).body
      const created: string[] = []
      for (let i = 0; i < 5; i++) {
        const w = await c('POST', `/v0/platform/accounts/${account.id}/wallets`, {
          address: nextAddress(),
          type: 'ETH',
          allowlisted: i % 2 === 0,
        })
        created.push(w.body.id)
      }
      const all = await c('GET', '/v0/platform/wallets')
      expect(all.headers.get('x-total-count')).toBe('5')
      expect(all.body.map((w: { id: string }) => w.id)).toEqual(created)
      const page = await c('GET', '/v0/platform/wallets?offset=1&limit=2')
      expect(page.body.map((w: { id: string }) => w.id)).toEqual(created.slice(1, 3))
      expect(page.headers.get('x-total-count')).toBe('5')
      // mark one allowlisted as the follower would
      await createRepos(api.dbh.db).wallets.update(created[0]!, { status: 'ALLOWLISTED', allowlisted: true })
      const allowlisted = await c('GET', '/v0/platform/wallets?allowlist=true')
      expect(allowlisted.body.map((w: { id: string }) => w.id)).toEqual([created[0]])
      expect(allowlisted.headers.get('x-total-count')).toBe('1')
      await c('PATCH', `/v0/platform/accounts/${account.id}/wallets/${created[4]}/remove`)
      const onPlatform = await c('GET', '/v0/platform/wallets?on_platform=true')
      expect(onPlatform.headers.get('x-total-count')).toBe('4')
      for (const bad of ['limit=1001', 'limit=0', 'offset=-1', 'limit=abc', 'allowlist=maybe']) {
        const res = await c('GET', `/v0/platform/wallets?${bad}`)
        expect([res.status, res.body.status], bad).toEqual([400, 'IR1000'])
      }
      expect((await c('GET', '/v0/platform/wallets?limit=1000')).status).toBe(200)
    })

    const walletInState = async (state: string) => {
      const account = await createAccount()
      const repos = createRepos(api.dbh.db)
      const allowlisted = state !== 'NOT_ALLOWLISTED'
      const w = await createWallet(account.id, { allowlisted })
      const path = `/v0/platform/accounts/${account.id}/wallets/${w.id}`
      if (state === 'ALLOWLISTED')
        await repos.wallets.update(w.id, { status: 'ALLOWLISTED', allowlisted: true })
      if (state === 'PAUSED') expect((await call('PATCH', `${path}/pause`)).status).toBe(200)
      if (state === 'PENDING_REMOVAL')
        expect((await call('PATCH', `${path}/remove`)).body.status).toBe('PENDING_REMOVAL')
      if (state === 'REMOVED') await repos.wallets.update(w.id, { status: 'REMOVED', on_platform: false })
      if (state === 'DENIED') await repos.wallets.update(w.id, { status: 'DENIED', allowlisted: false })
      return { account, wallet: w, path }
    }
    const walletTable: [string, string, string | undefined][] = [
      ['NOT_READY', 'pause', 'PAUSED'],
      ['ALLOWLISTED', 'pause', 'PAUSED'],
      ['NOT_ALLOWLISTED', 'pause', 'PAUSED'],
      ['PAUSED', 'pause', 'PAUSED'],
      ['PENDING_REMOVAL', 'pause', undefined],
      ['REMOVED', 'pause', undefined],
      ['DENIED', 'pause', undefined],
      ['PAUSED', 'reactivate', 'NOT_READY'],
      ['NOT_READY', 'reactivate', 'NOT_READY'],
      ['ALLOWLISTED', 'reactivate', 'ALLOWLISTED'],
      ['NOT_ALLOWLISTED', 'reactivate', 'NOT_ALLOWLISTED'],
      ['PENDING_REMOVAL', 'reactivate', undefined],
      ['REMOVED', 'reactivate', undefined],
      ['DENIED', 'reactivate', undefined],
      ['NOT_READY', 'remove', 'PENDING_REMOVAL'],
      ['ALLOWLISTED', 'remove', 'PENDING_REMOVAL'],
      ['NOT_ALLOWLISTED', 'remove', 'REMOVED'],
      ['PAUSED', 'remove', 'PENDING_REMOVAL'],
      ['PENDING_REMOVAL', 'remove', 'PENDING_REMOVAL'],
      ['REMOVED', 'remove', 'REMOVED'],
      ['DENIED', 'remove', 'REMOVED'],
    ]
    test.each(walletTable)(
      'behavior: wallet from %s, %s gives %s (undefined: 400 IR3105)',
      async (from, action, to) => {
        const { path } = await walletInState(from)
        const res = await call('PATCH', `${path}/${action}`)
        if (to === undefined) {
          expect([res.status, res.body.status]).toEqual([400, 'IR3105'])
        } else {
          expect([res.status, res.body.status]).toEqual([200, to])
          if (action === 'remove') expect(res.body.on_platform).toBe(false)
        }
      },
    )

    test('behavior: a wallet of a paused account cannot be reactivated alone (400 IR3004)', async () => {
      const { account, path } = await walletInState('PAUSED')
      await call('PATCH', `/v0/platform/accounts/${account.id}/pause`)
      const res = await call('PATCH', `${path}/reactivate`)
      expect([res.status, res.body.status]).toEqual([400, 'IR3004'])
    })

    test('behavior: the wallet must belong to the account in the path (404)', async () => {
      const a = await walletInState('NOT_READY')
      const other = await createAccount()
      const res = await call('PATCH', `/v0/platform/accounts/${other.id}/wallets/${a.wallet.id}/pause`)
      expect([res.status, res.body.status]).toEqual([404, 'IR3100'])
    })

    test('behavior: the legacy depositor remove drops only the Allowlist permission, with a Deprecation header', async () => {
      const { account, wallet } = await walletInState('ALLOWLISTED')
      const res = await call('PATCH', `/v0/depositors/${account.key}/wallets/${wallet.address}/remove`)
      expect(res.status).toBe(200)
      expect(res.headers.get('deprecation')).toBe('true')
      expect([res.body.status, res.body.on_platform]).toEqual(['PENDING_REMOVAL', true])
      const changes = await createRepos(api.dbh.db).allowlistChanges.forWallet(wallet.id)
      expect(changes.at(-1)).toMatchObject({
        permissions: '0',
        state: 'pending',
        reason: 'wallet_legacy_remove',
      })
    })
  })

  describe.runIf(run)('organization isolation', () => {
    test("behavior: another org's accounts and wallets answer 404 and never appear in lists", async () => {
      const account = await createAccount('isolated')
      const wallet = await createWallet(account.id)
      const intruder = await orgWithToken(api)
      const c = http(api.url, intruder.token)
      for (const path of [
        `/v0/platform/accounts/${account.id}`,
        '/v0/platform/accounts/isolated',
        `/v0/platform/wallets/${wallet.id}`,
        `/v0/platform/wallets/${wallet.address}`,
        `/v0/platform/accounts/${account.id}/wallets`,
      ]) {
        expect((await c('GET', path)).status, path).toBe(404)
      }
      expect((await c('PATCH', `/v0/platform/accounts/${account.id}/pause`)).status).toBe(404)
      expect((await c('GET', '/v0/platform/accounts')).body).toEqual([])
      expect((await c('GET', '/v0/platform/wallets')).body).toEqual([])
      expect((await call('GET', `/v0/platform/accounts/${account.id}`)).body.status).toBe('ACTIVE')
    })
  })

  describe.runIf(run)('discount rate', () => {
    test('behavior: a target fee rate is recorded with history; out of range is 400 IR3200', async () => {
      const account = await createAccount()
      const res = await call('POST', `/v0/platform/accounts/${account.id}/discount_rate`, {
        target_fee_rate: 0.08,
      })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({
        account_id: account.id,
        target_fee_rate: '0.08',
        created_at: expect.any(String),
      })
      for (const bad of [-0.1, 1.5, '0.1234567890123456789', 'abc']) {
        const r = await call('POST', `/v0/platform/accounts/${account.id}/discount_rate`, {
          target_fee_rate: bad,
        })
        expect(r.status, String(bad)).toBe(400)
      }
      expect((await createRepos(api.dbh.db).discounts.history(account.id)).length).toBe(1)
    })
  })

  describe.runIf(run)('Solana allowlist', () => {
    const SYSTEM = '11111111111111111111111111111111'
    const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'
    test('behavior: unknown address reads as not allowlisted; POST upserts; allowlisted = staking OR redemption', async () => {
      const unknown = await call('GET', `/sol/v0/allowlist/${SYSTEM}`)
      expect(unknown.body).toEqual({
        address: SYSTEM,
        allowlisted: false,
        permissions: { staking: false, redemption: false },
      })
      const created = await call('POST', '/sol/v0/allowlist', {
        address: TOKEN_PROGRAM,
        permissions: { staking: true, redemption: false },
      })
      expect(created.status).toBe(200)
      expect(created.body).toEqual({
        address: TOKEN_PROGRAM,
        allowlisted: true,
        permissions: { staking: true, redemption: false },
        created_at: expect.any(String),
      })
      const updated = await call('POST', '/sol/v0/allowlist', {
        address: TOKEN_PROGRAM,
        permissions: { staking: false, redemption: false },
      })
      expect(updated.body.allowlisted).toBe(false)
      expect(updated.body.created_at).toBe(created.body.created_at)
      expect((await call('GET', `/sol/v0/allowlist/${TOKEN_PROGRAM}`)).body.allowlisted).toBe(false)
    })

    test.each([
      ['0x-address', '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549'],
      ['base58 of 31 bytes', '1111111111111111111111111111111'],
      ['invalid base58 char 0', `0${SYSTEM.slice(1)}`],
    ])('behavior: %s is 400 IR3300', async (_name, address) => {
      const get = await call('GET', `/sol/v0/allowlist/${address}`)
      expect([get.status, get.body.status]).toEqual([400, 'IR3300'])
      const post = await call('POST', '/sol/v0/allowlist', {
        address,
        permissions: { staking: true, redemption: true },
      })
      expect([post.status, post.body.status]).toEqual([400, 'IR3300'])
    })

    test('behavior: missing permissions is 400 naming the field', async () => {
      const res = await call('POST', '/sol/v0/allowlist', { address: SYSTEM, permissions: { staking: true } })
      expect([res.status, res.body.status]).toEqual([400, 'IR1000'])
      expect(res.body.message).toMatch(/redemption/)
    })
  })

  describe.runIf(run)('every protected route', () => {
    const routes: [string, string, string][] = [
      ['POST', '/v0/platform/accounts', 'write:platform'],
      ['GET', '/v0/platform/accounts', 'read:platform'],
      ['GET', '/v0/platform/accounts/k', 'read:platform'],
      ['PATCH', '/v0/platform/accounts/k/pause', 'write:platform'],
      ['PATCH', '/v0/platform/accounts/k/remove', 'write:platform'],
      ['PATCH', '/v0/platform/accounts/k/reactivate', 'write:platform'],
      ['POST', '/v0/platform/accounts/k/discount_rate', 'write:platform'],
      ['GET', '/v0/platform/wallets/0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549', 'read:platform'],
      ['GET', '/v0/platform/wallets', 'read:platform'],
      ['POST', '/v0/platform/accounts/k/wallets', 'write:platform'],
      ['GET', '/v0/platform/accounts/k/wallets', 'read:platform'],
      ['PATCH', '/v0/platform/accounts/k/wallets/w/pause', 'write:platform'],
      ['PATCH', '/v0/platform/accounts/k/wallets/w/reactivate', 'write:platform'],
      ['PATCH', '/v0/platform/accounts/k/wallets/w/remove', 'write:platform'],
      ['PATCH', '/v0/depositors/k/wallets/w/remove', 'write:platform'],
      ['GET', '/sol/v0/allowlist/11111111111111111111111111111111', 'read:sol-allowlist'],
      ['POST', '/sol/v0/allowlist', 'write:sol-allowlist'],
    ]
    test('behavior: 401 IR2000 without a token and 403 IR2002 with a token lacking the scope', async () => {
      const others = await orgWithToken(api, { scopes: 'impersonate:org' })
      for (const [method, path] of routes) {
        const anon = await http(api.url)(method, path, method === 'GET' ? undefined : {})
        expect([anon.status, anon.body.status], `${method} ${path}`).toEqual([401, 'IR2000'])
        const scoped = await http(api.url, others.token)(method, path, method === 'GET' ? undefined : {})
        expect([scoped.status, scoped.body.status], `${method} ${path}`).toEqual([403, 'IR2002'])
      }
    })
  })

  describe.runIf(run)('errors, health and docs', () => {
    test('behavior: unknown route 404, malformed JSON 400, body over 1 MiB 413, each with a request id', async () => {
      const notFound = await call('GET', '/v9/nothing')
      expect([notFound.status, notFound.body.status]).toEqual([404, 'IR1004'])
      expect(notFound.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
      const malformed = await call('POST', '/v0/platform/accounts', '{"key": ')
      expect([malformed.status, malformed.body.status]).toEqual([400, 'IR1001'])
      const huge = await call('POST', '/v0/platform/accounts', { key: 'x'.repeat(1024 * 1024 + 10) })
      expect([huge.status, huge.body.status]).toEqual([413, 'IR1002'])
      const xml = await call('POST', '/v0/platform/accounts', '<key/>', { 'content-type': 'application/xml' })
      expect([xml.status, xml.body.status]).toEqual([415, 'IR1003'])
      for (const res of [notFound, malformed, huge, xml])
        expect(Object.keys(res.body).sort()).toEqual(['message', 'status'])
    })

    test('behavior: PATCH with an empty JSON body is accepted', async () => {
      const account = await createAccount()
      const res = await call('PATCH', `/v0/platform/accounts/${account.id}/pause`, undefined, {
        'content-type': 'application/json',
      })
      expect(res.status).toBe(200)
    })

    test('behavior: /health, /ready and /docs are public', async () => {
      const anon = http(api.url)
      expect((await anon('GET', '/health')).body).toEqual({ status: 'ok' })
      expect((await anon('GET', '/ready')).body).toEqual({ status: 'ready' })
      const spec = await anon('GET', '/docs/json')
      expect(spec.status).toBe(200)
      expect(Object.keys(spec.body.paths)).toEqual(
        expect.arrayContaining([
          '/v0/platform/accounts',
          '/v0/platform/wallets',
          '/sol/v0/allowlist',
          '/oauth/token',
        ]),
      )
      expect((await anon('GET', '/docs')).status).toBeLessThan(400)
    })
  })
})

describe('internal errors', () => {
  test('behavior: a failure inside answers 500 IR5000 without internals, and /ready answers 503 IR5030', async () => {
    const api = await startTestApi('pglite')
    const org = await orgWithToken(api)
    await api.dbh.db.destroy() // the database goes away under the running app
    try {
      const res = await http(api.url, org.token)('GET', '/v0/platform/accounts')
      expect(res.status).toBe(500)
      expect(res.body).toEqual({ message: expect.stringMatching(/^internal error/), status: 'IR5000' })
      expect(JSON.stringify(res.body)).not.toMatch(/knex|pool|stack|at /i)
      expect(res.headers.get('x-request-id')).toBeTruthy()
      const ready = await http(api.url)('GET', '/ready')
      expect([ready.status, ready.body.status]).toEqual([503, 'IR5030'])
    } finally {
      await api.app.close()
    }
  })
})
