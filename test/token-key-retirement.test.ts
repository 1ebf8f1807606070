// Issue 36, item 4: a token verified before is honoured only while its signing key is live. Two API processes
// on one Postgres database keep a cache of verified tokens each; a key retired by `lsreport keys rotate` (run by
// another process) or removed from the store stops the tokens it signed on both, cached or not, within the
// key set's refresh (KEY_REFRESH_MS), with the answer an unseen token gets.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, describe, expect, test } from 'vitest'
import { KEY_REFRESH_MS, RETIREMENT_GRACE_SECONDS } from '../api/auth/key-states.ts'
import { rotateSigningKey } from '../api/auth/key-store.ts'
import { createClient, createOrg } from '../cli/admin.ts'
import { decodeKeySecret } from '../common/config.ts'
import { http, startTestApi, type TestApi } from './helpers/api.ts'
import { cli, TEST_SIGNING_KEY_SECRET } from './helpers/cli.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined)
})

/** The tokens' audience and issuer: one public URL for both processes, as behind a load balancer. */
const PUBLIC_URL = 'https://api.lsreport.test'
/** A short token lifetime: a retiring key retires TTL + grace after its successor was made. */
const TTL_SECONDS = 30
const RETIRED = {
  message: 'access token signed by a retired signing key: request a new one',
  status: 'IR2001',
}
const INVALID = { message: 'invalid access token', status: 'IR2001' }

/** A client-credentials token from the process at `base`. */
async function tokenFrom(base: string, client: { client_id: string; client_secret: string }) {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', audience: PUBLIC_URL, ...client }),
  })
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { access_token: string }).access_token
}

/** A platform read with `token` at `api`: its status and body. */
async function read(api: TestApi, token: string) {
  const res = await http(api.url, token)('GET', '/v0/platform/accounts')
  return { status: res.status, body: res.status === 200 ? 'ok' : res.body }
}

/** Polls `probe` until it answers `expected`, at most `timeoutMs`, then holds it to `expected`. */
async function eventually<T>(probe: () => Promise<T>, expected: T, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = await probe()
  while (JSON.stringify(last) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100))
    last = await probe()
  }
  expect(last).toEqual(expected)
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid as string

describe.runIf(pgOk)('verified tokens and the live key set (two API processes, one Postgres)', () => {
  test('behavior: a token verified before its key retired (keys rotate by the CLI) or was removed (row deleted) is refused after it on both processes, as an unseen one is', async () => {
    const dbh = await migratedTestDatabase()
    cleanups.push(() => dbh.close())
    const env = { BASE_URL: PUBLIC_URL, TOKEN_TTL_SECONDS: String(TTL_SECONDS) }
    const a = await startTestApi('postgres', env, { dbh })
    cleanups.push(a.close)
    const b = await startTestApi('postgres', env, { dbh })
    cleanups.push(b.close)
    const org = await createOrg(dbh.db, { name: 'Key Org', canAllowlist: false })
    const client = await createClient(dbh.db, { orgId: org.id, scopes: 'read:platform' })
    const cliEnv = {
      DATABASE_URL: dbh.url,
      SIGNING_KEY_SECRET: TEST_SIGNING_KEY_SECRET,
      TOKEN_TTL_SECONDS: String(TTL_SECONDS),
      DATA_DIR: await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-key-retire-')),
      LOG_LEVEL: 'warn',
    }
    cleanups.push(() => fs.rm(cliEnv.DATA_DIR, { recursive: true, force: true }))
    // a process sees a change of the key set within KEY_REFRESH_MS, plus a request's time
    const seen = KEY_REFRESH_MS + 2_000

    // retirement: a token of the first key, verified (and cached) by both processes
    const cached = await tokenFrom(a.url, client)
    const first = kidOf(cached)
    const unseenOfFirst = await tokenFrom(b.url, client) // shown to no process before the retirement
    for (const api of [a, b]) expect(await read(api, cached)).toEqual({ status: 200, body: 'ok' })
    // `lsreport keys rotate` in another process; its key made TTL + grace - 2 s ago (as if that much time had
    // passed since), so the first key retires 2 s from now while the token has ~28 s left
    const rotated = await cli<{ kid: string; replaced_kid: string }>(['keys', 'rotate', '--json'], cliEnv)
    expect(rotated.replaced_kid).toBe(first)
    await dbh.db.raw(`update signing_keys set created_at = now() - make_interval(secs => ?) where kid = ?`, [
      TTL_SECONDS + RETIREMENT_GRACE_SECONDS - 2,
      rotated.kid,
    ])
    for (const api of [a, b]) await eventually(() => read(api, cached), { status: 401, body: RETIRED }, seen)
    expect(decodeJwt(cached).exp! * 1000).toBeGreaterThan(Date.now()) // refused, not expired
    for (const api of [a, b]) expect(await read(api, unseenOfFirst)).toEqual({ status: 401, body: RETIRED })
    const jwks = (await http(a.url)('GET', '/.well-known/jwks.json')).body.keys.map(
      (k: { kid: string }) => k.kid,
    )
    expect(jwks).toEqual([rotated.kid])

    // removal: a token of the second key, verified by both; a third key is made (the second one retiring for
    // TTL + grace), then the second key's row is deleted (an operator removing a key before its time)
    const second = await tokenFrom(b.url, client)
    expect(kidOf(second)).toBe(rotated.kid)
    const unseen = await tokenFrom(a.url, client)
    for (const api of [a, b]) expect(await read(api, second)).toEqual({ status: 200, body: 'ok' })
    // (what `keys rotate` runs, from this test's own handle: a writer neither process knows of)
    const third = await rotateSigningKey(dbh.db, decodeKeySecret(TEST_SIGNING_KEY_SECRET)!)
    expect(third.replaced?.kid).toBe(rotated.kid)
    for (const api of [a, b]) expect(await read(api, second)).toEqual({ status: 200, body: 'ok' }) // retiring
    await dbh.db('signing_keys').where({ kid: rotated.kid }).delete()
    for (const api of [a, b]) await eventually(() => read(api, second), { status: 401, body: INVALID }, seen)
    // a token of the removed key never shown before gets the same answer
    for (const api of [a, b]) expect(await read(api, unseen)).toEqual({ status: 401, body: INVALID })
    // and a token of the live key works on both
    await eventually(async () => kidOf(await tokenFrom(a.url, client)), third.added.kid, seen)
    const fresh = await tokenFrom(a.url, client)
    for (const api of [a, b]) expect(await read(api, fresh)).toEqual({ status: 200, body: 'ok' })
  }, 120_000)
})
