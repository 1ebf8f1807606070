import pg from 'pg'
import { type DbHandle, migrate, openDb } from '../db/index.ts'

/**
 * A migrated database for a benchmark: a scratch database on the server of `databaseUrl` (created here,
 * dropped by `close()`: never the user's own database), or PGlite in memory when no URL is given.
 */
export async function openScratchDb(databaseUrl: string | undefined, poolMax = 10): Promise<DbHandle> {
  if (!databaseUrl) {
    const dbh = await openDb({})
    await migrate(dbh.db)
    return dbh
  }
  const name = `lsreport_bench_${process.pid}_${Date.now()}`
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      await client.query(sql)
    } finally {
      await client.end()
    }
  }
  await admin(`create database ${name}`)
  const url = new URL(databaseUrl)
  url.pathname = `/${name}`
  const dbh = await openDb({ databaseUrl: url.toString(), poolMax })
  await migrate(dbh.db)
  return {
    ...dbh,
    close: async () => {
      await dbh.close()
      await admin(`drop database if exists ${name} with (force)`)
    },
  }
}
