import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { type DbHandle, migrate, openDb } from '../../db/index.ts'

/** True under CI: a test that needs a service fails (never skips) when the service is missing. */
export const IN_CI = process.env.CI === 'true' || process.env.CI === '1'

/** Admin URL of the test Postgres server (DATABASE_URL in CI; the machine's local server otherwise). */
export const PG_ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

async function canConnectPostgres(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    await client.query('select 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * Whether Postgres tests run here. Outside CI a missing server skips them with a warning;
 * under CI they run and fail on the connection error.
 */
export async function postgresAvailable(): Promise<boolean> {
  if (IN_CI) return true
  const ok = await canConnectPostgres()
  if (!ok) console.warn(`Postgres at ${PG_ADMIN_URL} unreachable: its tests are skipped (they fail under CI)`)
  return ok
}

/** Creates a fresh database on the test server; returns its URL and a drop function. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `lsreport_t_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL })
  await admin.connect()
  try {
    await admin.query(`create database ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(PG_ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL })
      await c.connect()
      try {
        await c.query(`drop database if exists ${name} with (force)`)
      } finally {
        await c.end()
      }
    },
  }
}

/** Whether Redis tests run here (same rule as Postgres: under CI they always run and fail if it is missing). */
export async function redisAvailable(): Promise<boolean> {
  if (IN_CI) return true
  const { Redis } = await import('ioredis')
  const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0 })
  try {
    await client.connect()
    return (await client.ping()) === 'PONG'
  } catch {
    console.warn(`Redis at ${REDIS_URL} unreachable: its tests are skipped (they fail under CI)`)
    return false
  } finally {
    client.disconnect()
  }
}

/** A fresh, migrated database on the test server; `close()` closes the pool and drops it. */
export async function migratedTestDatabase(): Promise<DbHandle & { url: string }> {
  const database = await createTestDatabase()
  const dbh = await openDb({ databaseUrl: database.url, poolMax: 4 })
  await migrate(dbh.db)
  return {
    ...dbh,
    url: database.url,
    close: async () => {
      await dbh.close()
      await database.drop()
    },
  }
}
