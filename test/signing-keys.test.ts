// Token signing keys shared through the store (issue 25): two `lsreport api` processes on one Postgres database
// accept each other's tokens, `lsreport keys rotate` adds a key both sign with while the old one verifies until
// its tokens have expired, then retires; the embedded (PGlite) single node keeps its secret in DATA_DIR.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { afterAll, describe, expect, test } from 'vitest'
import { ensureSigningKey, rotateSigningKey } from '../api/auth/key-store.ts'
import { generateSigningKey, LEGACY_KEY_FILE, signingKeyFromPem } from '../api/auth/keys.ts'
import { openPrivateKey } from '../api/auth/sealed-key.ts'
import { issueToken } from '../api/auth/tokens.ts'
import { decodeKeySecret } from '../common/config.ts'
import { type DbHandle, migrate, openDb } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { freePort, http } from './helpers/api.ts'
import { cli, cliFails, cliOrgClient, cliText, spawnCli } from './helpers/cli.ts'
import { createTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined)
})

/** What the API answers a token signed by a retired key (docs/decisions.md, 401 IR2001). */
const RETIRED = {
  message: 'access token signed by a retired signing key: request a new one',
  status: 'IR2001',
}

type Client = { client_id: string; client_secret: string }
type KeyLine = { kid: string; created_at: string; retires_at: string | null; status: string; source: string }

async function tempDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix))
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }))
  return dir
}

/** A client-credentials token from the process at `processUrl`, for the deployment's public `audience`. */
async function tokenFrom(processUrl: string, audience: string, client: Client): Promise<string> {
  const res = await fetch(`${processUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', audience, ...client }),
  })
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { access_token: string }).access_token
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid

/** The kids the JWKS of `processUrl` lists. */
async function jwksKids(processUrl: string): Promise<string[]> {
  const res = await http(processUrl)('GET', '/.well-known/jwks.json')
  expect(res.status).toBe(200)
  for (const key of res.body.keys)
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' })
  return res.body.keys.map((k: { kid: string }) => k.kid)
}

/** Polls `read` until it answers `expected` (processes re-read the key set every 5 s), else fails. */
async function eventually<T>(read: () => Promise<T>, expected: T, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = await read()
  while (JSON.stringify(last) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200))
    last = await read()
  }
  expect(last).toEqual(expected)
}

/** `lsreport keys list --json`: one JSON line per key, newest first. */
async function keysList(env: Record<string, string>): Promise<KeyLine[]> {
  const out = await cliText(['keys', 'list', '--json'], env)
  return out
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as KeyLine)
}

/** The answer of a platform read with `token` at `processUrl`: status and body. */
async function read(processUrl: string, token: string) {
  const res = await http(processUrl, token)('GET', '/v0/platform/accounts')
  return { status: res.status, body: res.body }
}

describe.runIf(pgOk)('shared signing keys: two `lsreport api` processes on one Postgres database', () => {
  test('behavior: each accepts the other’s tokens; after `keys rotate` both list two keys, old tokens still work, new ones carry the new kid; once the old key retires it is gone from the JWKS and its tokens are refused', async () => {
    const database = await createTestDatabase()
    cleanups.push(database.drop)
    const secret = randomBytes(32).toString('base64')
    // one public URL behind the load balancer: the token audience and issuer of every process
    const publicUrl = 'https://api.lsreport.test'
    const ttlSeconds = 20
    const shared = {
      DATABASE_URL: database.url,
      SIGNING_KEY_SECRET: secret,
      BASE_URL: publicUrl,
      TOKEN_TTL_SECONDS: String(ttlSeconds),
      LOG_LEVEL: 'warn',
    }
    // each machine has its own data directory: nothing of the keys may live there
    const envA = { ...shared, DATA_DIR: await tempDir('lsreport-keys-a-'), PORT: String(await freePort()) }
    const envB = { ...shared, DATA_DIR: await tempDir('lsreport-keys-b-'), PORT: String(await freePort()) }
    const a = `http://127.0.0.1:${envA.PORT}`
    const b = `http://127.0.0.1:${envB.PORT}`
    await cli(['migrate'], envA)
    const { org, client } = await cliOrgClient(envA, 'Keys Org', 'read:platform')

    // without the secret a Postgres deployment refuses to start, saying why
    const { SIGNING_KEY_SECRET: _, ...withoutSecret } = envA
    const refused = await cliFails(['api'], withoutSecret)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/SIGNING_KEY_SECRET is required with DATABASE_URL/)
    expect(await keysList(envA)).toEqual([]) // and made no key

    // both start at once on the empty table: one first key between them
    const ready = (url: string) => async () => (await fetch(`${url}/ready`)).status === 200
    const [apiA, apiB] = await Promise.all([
      spawnCli(['api'], envA, ready(a)),
      spawnCli(['api'], envB, ready(b)),
    ])
    cleanups.push(apiA.stop, apiB.stop)
    const [first] = await keysList(envA)
    expect(await keysList(envA)).toEqual([
      {
        kid: first!.kid,
        created_at: first!.created_at,
        retires_at: null,
        status: 'current',
        source: 'generated',
      },
    ])
    expect(await jwksKids(a)).toEqual([first!.kid])
    expect(await jwksKids(b)).toEqual([first!.kid])

    // a token from A is accepted by B and one from B by A
    const fromA = await tokenFrom(a, publicUrl, client)
    const fromB = await tokenFrom(b, publicUrl, client)
    expect([kidOf(fromA), kidOf(fromB)]).toEqual([first!.kid, first!.kid])
    expect((await read(b, fromA)).status).toBe(200)
    expect((await read(a, fromB)).status).toBe(200)
    // and by a client of the service verifying on its own, with another library, against the JWKS URL
    const verifyAt = (url: string, token: string) =>
      jwtVerify(token, createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`)), {
        issuer: publicUrl,
        audience: publicUrl,
        algorithms: ['ES256'],
      })
    expect((await verifyAt(a, fromB)).payload.sub).toBe(client.client_id)

    // tokens taken before the rotation, not yet shown to any process (nothing cached)
    const beforeFromA = await tokenFrom(a, publicUrl, client)
    const beforeFromB = await tokenFrom(b, publicUrl, client)
    const rotated = await cli<{
      kid: string
      created_at: string
      status: string
      replaced_kid: string
      replaced_retires_at: string
    }>(['keys', 'rotate', '--json'], envA)
    expect(rotated).toMatchObject({ status: 'current', replaced_kid: first!.kid })
    expect(rotated.kid).not.toBe(first!.kid)
    expect(Date.parse(rotated.replaced_retires_at) - Date.parse(rotated.created_at)).toBe(
      (ttlSeconds + 10) * 1000,
    )
    for (const token of [beforeFromA, beforeFromB]) {
      expect((await read(a, token)).status).toBe(200)
      expect((await read(b, token)).status).toBe(200)
    }

    // new tokens are signed with the new key (each process sees it within 5 s) and work on both
    await eventually(async () => kidOf(await tokenFrom(a, publicUrl, client)), rotated.kid)
    const newFromA = await tokenFrom(a, publicUrl, client)
    expect((await read(b, newFromA)).status).toBe(200) // B may not have read the new key yet: the kid makes it
    await eventually(async () => kidOf(await tokenFrom(b, publicUrl, client)), rotated.kid)
    const newFromB = await tokenFrom(b, publicUrl, client)
    expect((await read(a, newFromB)).status).toBe(200)
    expect((await verifyAt(b, newFromA)).protectedHeader.kid).toBe(rotated.kid)

    // during the overlap both JWKS list both keys, the new one first
    expect(await jwksKids(a)).toEqual([rotated.kid, first!.kid])
    expect(await jwksKids(b)).toEqual([rotated.kid, first!.kid])
    const overlap = await keysList(envB)
    expect(overlap.map((k) => [k.kid, k.status, k.retires_at])).toEqual([
      [rotated.kid, 'current', null],
      [first!.kid, 'retiring', rotated.replaced_retires_at],
    ])

    // a token the old key signs now (its private key opened from the store with the secret) is accepted
    // while the key is retiring; the same kind of token is refused once it retired
    const [, oldRow] = await storedKeys(database.url)
    const oldKey = await signingKeyFromPem(
      openPrivateKey(decodeKeySecret(secret)!, oldRow!.kid, oldRow!.sealed_private_key),
    )
    expect(oldKey.kid).toBe(first!.kid)
    const signedByOld = () =>
      issueToken(oldKey, {
        issuer: publicUrl,
        audience: publicUrl,
        clientId: client.client_id,
        orgId: org.id,
        scopes: ['read:platform'],
        ttlSeconds,
      })
    expect((await read(a, await signedByOld())).status).toBe(200)
    expect((await read(b, await signedByOld())).status).toBe(200)

    const retiresAt = Date.parse(rotated.replaced_retires_at)
    expect(retiresAt - Date.now()).toBeGreaterThan(0)

    // while the old key retires: a process given another secret refuses to start, naming the variable (no key it
    // could not open is used)
    const wrong = {
      ...envB,
      SIGNING_KEY_SECRET: randomBytes(32).toString('hex'),
      PORT: String(await freePort()),
    }
    const mismatch = await cliFails(['api'], wrong)
    expect(mismatch.code).toBe(1)
    expect(mismatch.stderr).toMatch(/was encrypted under another SIGNING_KEY_SECRET/)
    const rotateRefused = await cliFails(['keys', 'rotate'], wrong)
    expect(rotateRefused.stderr).toMatch(/was encrypted under another SIGNING_KEY_SECRET/)
    expect((await keysList(envA)).length).toBe(2)

    await new Promise((r) => setTimeout(r, Math.max(0, retiresAt + 300 - Date.now())))
    expect(await jwksKids(a)).toEqual([rotated.kid])
    expect(await jwksKids(b)).toEqual([rotated.kid])
    for (const url of [a, b]) {
      expect(await read(url, await signedByOld())).toEqual({ status: 401, body: RETIRED })
    }
    expect((await keysList(envA)).map((k) => [k.kid, k.status])).toEqual([
      [rotated.kid, 'current'],
      [first!.kid, 'retired'],
    ])
    // the new key's tokens still work on both, and the remote JWKS verifies them
    const after = await tokenFrom(b, publicUrl, client)
    expect((await read(a, after)).status).toBe(200)
    expect((await verifyAt(a, after)).protectedHeader.kid).toBe(rotated.kid)
  })
})

/** The stored key rows of the database at `url`, newest first. */
async function storedKeys(url: string) {
  const dbh = await openDb({ databaseUrl: url, poolMax: 1 })
  try {
    return await createRepos(dbh.db).signingKeys.list()
  } finally {
    await dbh.close()
  }
}

describe('embedded single node (PGlite): the secret lives in DATA_DIR', () => {
  test('behavior: the first start imports the key file of an earlier version and keeps a 0600 secret; a rotation between two starts keeps the earlier tokens valid', async () => {
    const dataDir = await tempDir('lsreport-keys-embedded-')
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const env = { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' }
    // what an earlier version left: the node's own key in DATA_DIR
    const legacy = await generateSigningKey()
    await fs.writeFile(path.join(dataDir, LEGACY_KEY_FILE), legacy.pem, { mode: 0o600 })
    const { client } = await cliOrgClient(env, 'Embedded Org', 'read:platform')
    const ready = async () => (await fetch(`${base}/ready`)).status === 200

    const first = await spawnCli(['api'], env, ready)
    cleanups.push(first.stop)
    expect(await jwksKids(base)).toEqual([legacy.key.kid])
    const earlier = await tokenFrom(base, base, client)
    expect(kidOf(earlier)).toBe(legacy.key.kid)
    const secretFile = await fs.stat(path.join(dataDir, 'signing-key-secret'))
    expect(secretFile.mode & 0o777).toBe(0o600)
    await first.stop()

    // one process per data directory: the rotation runs between two starts
    const rotated = await cli<{ kid: string; replaced_kid: string }>(['keys', 'rotate', '--json'], env)
    expect(rotated.replaced_kid).toBe(legacy.key.kid)
    expect((await keysList(env)).map((k) => [k.kid, k.status, k.source])).toEqual([
      [rotated.kid, 'current', 'generated'],
      [legacy.key.kid, 'retiring', 'key_file'],
    ])
    // a SIGNING_KEY_SECRET that is not the one the keys were sealed under is refused
    const wrong = await cliFails(['keys', 'rotate'], {
      ...env,
      SIGNING_KEY_SECRET: randomBytes(32).toString('hex'),
    })
    expect(wrong.stderr).toMatch(/was encrypted under another SIGNING_KEY_SECRET/)

    const second = await spawnCli(['api'], env, ready)
    cleanups.push(second.stop)
    expect(await jwksKids(base)).toEqual([rotated.kid, legacy.key.kid])
    expect((await read(base, earlier)).status).toBe(200)
    const later = await tokenFrom(base, base, client)
    expect(kidOf(later)).toBe(rotated.kid)
    expect((await read(base, later)).status).toBe(200)
    await second.stop()
  })
})

describe('ensureSigningKey and rotateSigningKey (PGlite store)', () => {
  test('behavior: JWT_PRIVATE_KEY is imported once and becomes current; a rotation replaces it for good; without it an empty table gets one key', async () => {
    const dbh: DbHandle = await openDb({})
    cleanups.push(() => dbh.close())
    await migrate(dbh.db)
    const dataDir = await tempDir('lsreport-keys-store-')
    const secret = randomBytes(32)
    const keys = () => createRepos(dbh.db).signingKeys.list()

    const made = await ensureSigningKey(dbh.db, { secret, jwtPrivateKey: undefined, dataDir })
    expect(made?.source).toBe('generated')
    expect(await ensureSigningKey(dbh.db, { secret, jwtPrivateKey: undefined, dataDir })).toBeUndefined()
    expect((await keys()).map((k) => k.kid)).toEqual([made!.kid])

    const env = await generateSigningKey()
    const imported = await ensureSigningKey(dbh.db, { secret, jwtPrivateKey: env.pem, dataDir })
    expect(imported).toMatchObject({ kid: env.key.kid, source: 'jwt_private_key' })
    expect(imported!.public_jwk).toEqual(env.key.publicJwk)
    expect(imported!.sealed_private_key).not.toContain(env.pem.split('\n')[1])
    expect(openPrivateKey(secret, env.key.kid, imported!.sealed_private_key)).toBe(env.pem)
    expect((await keys()).map((k) => k.kid)).toEqual([env.key.kid, made!.kid])

    const { added, replaced } = await rotateSigningKey(dbh.db, secret)
    expect(replaced?.kid).toBe(env.key.kid)
    // the next start with the same JWT_PRIVATE_KEY does not bring it back
    expect(await ensureSigningKey(dbh.db, { secret, jwtPrivateKey: env.pem, dataDir })).toBeUndefined()
    expect((await keys()).map((k) => k.kid)).toEqual([added.kid, env.key.kid, made!.kid])

    // a new JWT_PRIVATE_KEY sealed under another secret would leave the other processes without the current key
    const other = await generateSigningKey()
    await expect(
      ensureSigningKey(dbh.db, { secret: randomBytes(32), jwtPrivateKey: other.pem, dataDir }),
    ).rejects.toMatchObject({ problem: 'wrong_secret' })
    expect((await keys()).length).toBe(3)
  })

  test('behavior: a stored key altered in the store is refused when opened', async () => {
    const dbh: DbHandle = await openDb({})
    cleanups.push(() => dbh.close())
    await migrate(dbh.db)
    const secret = randomBytes(32)
    const row = await ensureSigningKey(dbh.db, {
      secret,
      jwtPrivateKey: undefined,
      dataDir: await tempDir('k-'),
    })
    const parts = row!.sealed_private_key.split('.')
    parts[3] = `${parts[3]![0] === 'A' ? 'B' : 'A'}${parts[3]!.slice(1)}`
    await dbh
      .db('signing_keys')
      .where({ kid: row!.kid })
      .update({ sealed_private_key: parts.join('.') })
    await expect(rotateSigningKey(dbh.db, secret)).rejects.toMatchObject({ problem: 'tampered' })
  })
})
