import fs from 'node:fs/promises'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { createPgConfig } from '@electric-sql/pglite/node-postgres'
import knex, { type Knex } from 'knex'
import pg from 'pg'
import { markPglite } from './bulk.ts'
import { migrationSource } from './migrations/index.ts'

export type Db = Knex
export type Tx = Knex.Transaction
/** A database handle or a transaction: every repository method takes one. */
export type Queryable = Knex | Knex.Transaction

// numeric and int8 come back as strings (exact); timestamptz as Date. Same on pg and PGlite.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v)

export interface DbOptions {
  /** Postgres URL; when absent, PGlite is used. */
  databaseUrl?: string | undefined
  /** PGlite data directory; when absent (and no URL), PGlite runs in memory. */
  pgliteDir?: string | undefined
  /** Pool size on real Postgres (default 10). */
  poolMax?: number
}

export interface DbHandle {
  db: Db
  backend: 'postgres' | 'pglite'
  /** Closes the pool (and PGlite). */
  close(): Promise<void>
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
      connection: options.databaseUrl,
      pool: { min: 0, max: options.poolMax ?? 10 },
    })
    return { db, backend: 'postgres', close: () => db.destroy() }
  }
  if (options.pgliteDir) await fs.mkdir(path.dirname(options.pgliteDir), { recursive: true })
  const pglite = options.pgliteDir ? new PGlite(options.pgliteDir) : new PGlite()
  await pglite.waitReady
  const db = knex({
    client: 'pg',
    connection: async () => createPgConfig(pglite) as unknown as Knex.PgConnectionConfig,
    pool: { min: 0, max: 1 },
  })
  markPglite(db)
  return {
    db,
    backend: 'pglite',
    close: async () => {
      await db.destroy()
      await pglite.close()
    },
  }
}

/** Applies every pending migration (append-only list in db/migrations). Returns the names applied. */
export async function migrate(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]]
  return applied
}

/** True when every known migration has been applied. */
export async function migrationsUpToDate(db: Db): Promise<boolean> {
  const [, pending] = (await db.migrate.list({ migrationSource })) as [unknown[], unknown[]]
  return pending.length === 0
}
