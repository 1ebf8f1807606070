import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { buildApp } from '../../api/app.ts'
import { openSigningKeys, type SigningKeys } from '../../api/auth/signing-keys.ts'
import { createClient, createOrg } from '../../cli/admin.ts'
import { loadConfig } from '../../common/config.ts'
import { createLogger, flushLogger, type Logger } from '../../common/logger.ts'
import { type DbHandle, migrate, openDb } from '../../db/index.ts'
import { TEST_SIGNING_KEY_SECRET } from './cli.ts'
import { freePort } from './free-port.ts'
import { checkAnswer, holdAnswersToDocument } from './openapi-answers.ts'
import { createTestDatabase } from './services.ts'

/** A free TCP port on 127.0.0.1 (from ./free-port.ts, kept here for the tests that import it from api.ts). */
export { freePort }

export type Backend = 'pglite' | 'postgres'

export interface TestApi {
  backend: Backend
  url: string
  app: FastifyInstance
  dbh: DbHandle
  dataDir: string
  /** The app's signing keys (a test signs its own tokens with `await signingKeys.current()`). */
  signingKeys: SigningKeys
  close(): Promise<void>
}

/**
 * Starts the real app on a real socket (127.0.0.1, free port) over a fresh database:
 * an in-memory PGlite or a new database on the Postgres server.
 */
export async function startTestApi(
  backend: Backend,
  env: Record<string, string> = {},
  extra: { redis?: Redis; dbh?: DbHandle; logger?: Logger } = {},
): Promise<TestApi> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-test-'))
  // a database handle given by the caller stays the caller's to close
  const database = backend === 'postgres' && !extra.dbh ? await createTestDatabase() : undefined
  const dbh = extra.dbh ?? (await openDb({ databaseUrl: database?.url, poolMax: 4 }))
  if (!extra.dbh) await migrate(dbh.db)
  // The audience is the base URL, so the port must be known before the app is built.
  const port = String(await freePort())
  // one signing-key secret per test file: apps sharing a database (extra.dbh) share its keys, as processes of a
  // deployment share SIGNING_KEY_SECRET
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: port,
    LOG_LEVEL: 'silent',
    SIGNING_KEY_SECRET: TEST_SIGNING_KEY_SECRET,
    ...env,
  })
  const logger = extra.logger ?? createLogger({ level: 'silent' })
  const signingKeys = await openSigningKeys({ db: dbh.db, config, logger })
  const app = await buildApp({ config, logger, db: dbh.db, signingKeys, redis: extra.redis })
  const url = await app.listen({ host: '127.0.0.1', port: Number(port) })
  holdAnswersToDocument(app, url)
  return {
    backend,
    url,
    app,
    dbh,
    dataDir,
    signingKeys,
    close: async () => {
      await app.close()
      // the logger writes in batches: a test reading its log file after close() finds every line
      await flushLogger(logger)
      if (!extra.dbh) await dbh.close()
      await database?.drop()
      await fs.rm(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * Apps of a test file over one migrated PGlite, opened before the file's tests and closed after them with
 * every app started on it (opening and migrating one costs seconds): for files whose tests each make their
 * own orgs and clients. Call it at the top level of the file.
 *
 * @example
 * const startApi = pgliteAppsOfFile()
 * const api = await startApi({ RATE_LIMIT_MAX: '3' })
 */
export function pgliteAppsOfFile(): (
  env?: Record<string, string>,
  extra?: { redis?: Redis },
) => Promise<TestApi> {
  const apps: TestApi[] = []
  let dbh: DbHandle | undefined
  beforeAll(async () => {
    dbh = await openDb({ poolMax: 4 })
    await migrate(dbh.db)
  })
  afterAll(async () => {
    for (const app of apps.reverse()) await app.close().catch(() => undefined)
    await dbh?.close()
  })
  return async (env = {}, extra = {}) => {
    if (!dbh) throw new Error('pgliteAppsOfFile: an app was started before the file opened its database')
    const started = await startTestApi('pglite', env, { ...extra, dbh })
    apps.push(started)
    return started
  }
}

/** Creates an org and a client with the given scopes and returns a bearer token for it. */
export async function orgWithToken(
  api: TestApi,
  options: { scopes?: string; canAllowlist?: boolean; name?: string } = {},
): Promise<{ orgId: string; clientId: string; clientSecret: string; token: string }> {
  const org = await createOrg(api.dbh.db, {
    name: options.name ?? 'Test Org',
    canAllowlist: options.canAllowlist ?? true,
  })
  const client = await createClient(api.dbh.db, {
    orgId: org.id,
    scopes: options.scopes ?? 'read:platform write:platform read:sol-allowlist write:sol-allowlist',
  })
  return {
    orgId: org.id,
    clientId: client.client_id,
    clientSecret: client.client_secret,
    token: await clientToken(api.url, client),
  }
}

/**
 * A client-credentials access token from the service at `base` (its audience), as a platform takes one;
 * throws when the service refuses.
 */
export async function clientToken(
  base: string,
  client: { client_id: string; client_secret: string },
): Promise<string> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', audience: base, ...client }),
  })
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { access_token: string }).access_token
}

/**
 * A small HTTP client over fetch that returns status, headers and parsed JSON. An answer of an app started by
 * `startTestApi` that is not what its OpenAPI document says (body, headers: ./openapi-answers.ts) throws.
 */
export function http(base: string, token?: string) {
  return async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    })
    const text = await res.text()
    await checkAnswer(base, { method, url, status: res.status, headers: res.headers, text })
    let json: unknown
    try {
      json = text ? JSON.parse(text) : undefined
    } catch {
      json = text
    }
    // biome-ignore lint/suspicious/noExplicitAny: test convenience: bodies are asserted field by field
    return { status: res.status, headers: res.headers, body: json as any }
  }
}
