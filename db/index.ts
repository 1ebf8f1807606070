import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import knex, { type Knex } from 'knex'
import pg from 'pg'
import { isMissingPackage, MissingDevDependencyError } from '../common/dev-dependency.ts'
import { watchForStalls } from './stall-watchdog.ts'
import { useFastTimestamps } from './timestamps.ts'

export type Db = Knex
export type Tx = Knex.Transaction
/** A database handle or a transaction: every repository factory takes one (see `inTransaction` in db/repos). */
export type Queryable = Knex | Knex.Transaction

export { type MigrationOptions, migrate, migrationsUpToDate } from './migrate.ts'

// numeric and int8 come back as strings (exact); timestamptz as Date (parsed by db/timestamps.ts). Same on
// pg and PGlite.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v)
useFastTimestamps()

/** How long a query may hear nothing from Postgres before its connection counts as lost (`DbOptions.stallMs`). */
const DEFAULT_STALL_MS = 120_000

export interface DbOptions {
  /** Postgres URL; when absent, PGlite is used. */
  databaseUrl?: string | undefined
  /** PGlite data directory; when absent (and no URL), a scratch database removed at close. */
  pgliteDir?: string | undefined
  /** Pool size on real Postgres (default 10). */
  poolMax?: number
  /**
   * Real Postgres: a query that hears nothing from the server for this long is failed as a lost connection
   * and its connection dropped (default 120 s; `lsreport api` uses 15 s, DB_STALL_MS overrides both).
   */
  stallMs?: number
}

export interface DbHandle {
  db: Db
  backend: 'postgres' | 'pglite'
  /**
   * How a PGlite database was made: an existing cluster, a copy of the template (with the migrations it
   * holds), or initdb (no usable template).
   */
  created?: 'existing' | 'template' | 'initdb'
  /** Closes the pool (and PGlite). */
  close(): Promise<void>
}

/**
 * The embedded database's modules (PGlite, the template), imported only when it is opened: PGlite is a dev
 * dependency, absent from a production install, where this says to set DATABASE_URL.
 */
async function loadEmbedded() {
  try {
    const [embedded, template] = await Promise.all([import('./embedded.ts'), import('./pglite-template.ts')])
    return { ...embedded, seedFromTemplate: template.seedFromTemplate }
  } catch (err) {
    if (!isMissingPackage(err, '@electric-sql/pglite')) throw err
    throw new MissingDevDependencyError(
      '@electric-sql/pglite',
      'the embedded database (no DATABASE_URL)',
      'set DATABASE_URL to a Postgres database',
      err,
    )
  }
}

/**
 * Opens knex on real Postgres (`databaseUrl`) or on PGlite (embedded, same SQL, same result types).
 *
 * @example
 * const { db, close } = await openDb({ databaseUrl: config.databaseUrl })
 */
export async function openDb(options: DbOptions): Promise<DbHandle> {
  if (options.databaseUrl) {
    const db = knex({
      client: 'pg',
      // a lost server fails fast (never a hang): connect within 5 s, wait at most 5 s for a pooled
      // connection, TCP keepalive finds dead peers, a query on a connection that went silent fails after
      // `stallMs`; broken connections are evicted by pg and knex.
      connection: { connectionString: options.databaseUrl, connectionTimeoutMillis: 5_000, keepAlive: true },
      acquireConnectionTimeout: 5_000,
      pool: {
        min: 0,
        max: options.poolMax ?? 10,
        afterCreate: (connection: unknown, done: (err: Error | null, connection: unknown) => void) => {
          watchForStalls(connection, options.stallMs ?? DEFAULT_STALL_MS)
          done(null, connection)
        },
      },
    })
    return { db, backend: 'postgres', close: () => db.destroy() }
  }
  const { pgliteKnex, seedFromTemplate, startPglite } = await loadEmbedded()
  let created: DbHandle['created']
  if (options.pgliteDir) {
    await fs.mkdir(path.dirname(options.pgliteDir), { recursive: true })
    const exists = await fs.stat(path.join(options.pgliteDir, 'PG_VERSION')).then(
      () => true,
      () => false,
    )
    created = exists ? 'existing' : (await seedFromTemplate(options.pgliteDir)) ? 'template' : 'initdb'
  }
  // "In memory" (tests, scratch databases): a copy of the template in a temporary directory, removed at
  // close. PGlite's own in-memory start runs initdb (or unpacks a tarball) at ~4 s of CPU and ~800 MB;
  // the copy opens in well under a second.
  let scratch: string | undefined
  if (!options.pgliteDir) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-pglite-'))
    if (await seedFromTemplate(path.join(dir, 'pg'))) scratch = dir
    else await fs.rm(dir, { recursive: true, force: true })
  }
  const dataDir = options.pgliteDir ?? (scratch ? path.join(scratch, 'pg') : undefined)
  const pglite = await startPglite(dataDir)
  const db = pgliteKnex(pglite)
  return {
    db,
    backend: 'pglite',
    ...(created ? { created } : {}),
    close: async () => {
      await db.destroy()
      await pglite.close()
      if (scratch) await fs.rm(scratch, { recursive: true, force: true })
    },
  }
}

const CONNECTION_ERRNOS = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])
/** SQLSTATEs of a lost server: admin/crash shutdown, cannot connect now, and every 08xxx connection exception. */
const CONNECTION_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123])$/
const CONNECTION_MESSAGE =
  /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|^timeout expired$|Timeout acquiring a connection|Client was closed and is not queryable|the database system is (starting up|shutting down)/i

/**
 * True when `err` (or an error in its `cause` chain) says the database connection was lost or cannot be made:
 * a socket errno (ECONNRESET, ECONNREFUSED, ...), a SQLSTATE of class 08 or 57P01-57P03 (e.g.
 * `pg_terminate_backend`), pg's "Connection terminated", a silent connection (`DatabaseStallError`), or knex's
 * pool acquire timeout. The API answers
 * these 503 IR5030; the pool drops such connections and the next request reconnects.
 */
export function isConnectionLoss(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 8; depth++) {
    const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown }
    if (typeof code === 'string' && (CONNECTION_ERRNOS.has(code) || CONNECTION_SQLSTATE.test(code)))
      return true
    if (name === 'KnexTimeoutError' || name === 'DatabaseStallError') return true
    if (typeof message === 'string' && CONNECTION_MESSAGE.test(message)) return true
    e = (e as { cause?: unknown }).cause
  }
  return false
}
