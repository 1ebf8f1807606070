import { PGlite } from '@electric-sql/pglite'
import { createPgConfig } from '@electric-sql/pglite/node-postgres'
import knex, { type Knex } from 'knex'
import { markPglite } from './bulk.ts'
import { guardPglite } from './pglite-guard.ts'

/**
 * The embedded database (PGlite): its Postgres settings and knex over one instance. Apart from db/index.ts so
 * that db/pglite-template.ts, which db/index.ts uses to seed a cluster, can make its template with them, and
 * so that db/index.ts loads PGlite (a dev dependency) only when the embedded database is opened.
 */

/**
 * Postgres settings of the embedded database. PGlite is one backend serving one connection, so the server
 * defaults sized for many (128 MB of shared buffers, zeroed at every start) only cost memory and start
 * time: 16 MB of shared buffers hold this service's hot pages; sorts and hashes get 8 MB each.
 */
export const PGLITE_SETTINGS = {
  shared_buffers: '16MB',
  work_mem: '8MB',
  maintenance_work_mem: '32MB',
  temp_buffers: '4MB',
  wal_buffers: '1MB',
} as const

export const PGLITE_START_PARAMS = [
  ...PGlite.defaultStartParams,
  ...Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
]

/** Opens PGlite on `dataDir` with `PGLITE_START_PARAMS`, once it is ready. */
export async function startPglite(dataDir: string | undefined): Promise<PGlite> {
  const pglite = new PGlite(dataDir, { startParams: PGLITE_START_PARAMS })
  await pglite.waitReady
  return pglite
}

/**
 * knex over one PGlite instance (one connection: PGlite is a single backend), through `guardPglite`: a
 * statement PGlite abandons fails (`PgliteAbortError`) rather than answering an empty result.
 */
export function pgliteKnex(pglite: PGlite): Knex {
  const guarded = guardPglite(pglite)
  const db = knex({
    client: 'pg',
    connection: async () => createPgConfig(guarded as PGlite) as unknown as Knex.PgConnectionConfig,
    pool: { min: 0, max: 1 },
  })
  markPglite(db, pglite)
  return db
}
