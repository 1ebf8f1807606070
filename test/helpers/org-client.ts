import path from 'node:path'
import { createClient, createOrg } from '../../cli/admin.ts'
import { loadConfig } from '../../common/config.ts'
import { migrate, openDb } from '../../db/index.ts'

/**
 * What `cliOrgClient` (./cli.ts) leaves, made in this process: migrates the database `env` names (DATABASE_URL,
 * else the embedded one in DATA_DIR/pg, as cli/context.ts opens it) and creates an org allowed to allowlist and
 * a client with `scopes`. One database opening where `lsreport migrate`, `orgs create` and `clients create`
 * take three (seconds each on PGlite): for tests whose subject is not those commands.
 *
 * @example
 * const { org, client } = await storeOrgClient({ DATA_DIR: dataDir }, 'Crash Org')
 */
export async function storeOrgClient(
  env: Record<string, string>,
  name: string,
  scopes = 'read:platform write:platform',
): Promise<{ org: { id: string }; client: { client_id: string; client_secret: string } }> {
  const config = loadConfig(env)
  const dbh = await openDb(
    config.databaseUrl
      ? { databaseUrl: config.databaseUrl, poolMax: 1 }
      : { pgliteDir: path.join(config.dataDir, 'pg') },
  )
  try {
    await migrate(dbh.db)
    const org = await createOrg(dbh.db, { name, canAllowlist: true })
    const client = await createClient(dbh.db, { orgId: org.id, scopes })
    return { org, client }
  } finally {
    await dbh.close()
  }
}
