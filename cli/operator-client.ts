import fs from 'node:fs/promises'
import path from 'node:path'
import { loadConfig } from '../common/config.ts'
import type { Db } from '../db/index.ts'
import { dataDirHolder } from '../db/lock.ts'
import { createRepos } from '../db/repos/index.ts'
import { createClient, createOrg } from './admin.ts'

/**
 * The embedded service's operator client: a client with the `admin` scope that `lsreport up` keeps in
 * `$DATA_DIR/operator-client.json` (mode 0600, beside the database and the signing key it could read anyway),
 * so that commands needing the database while `up` holds it (PGlite allows one process) act through the
 * running service's admin endpoints instead (`lsreport backfill`: cli/backfill-remote.ts).
 */
export interface OperatorClient {
  org_id: string
  client_id: string
  client_secret: string
  token_url: string
  audience: string
}

/** Where `up` keeps the operator client. */
export const OPERATOR_CLIENT_FILE = 'operator-client.json'

/** The operator client `up` wrote in `dataDir`, or undefined when there is none (or it is unreadable). */
export async function readOperatorClient(dataDir: string): Promise<OperatorClient | undefined> {
  try {
    return JSON.parse(await fs.readFile(path.join(dataDir, OPERATOR_CLIENT_FILE), 'utf8')) as OperatorClient
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof SyntaxError) return undefined
    throw err
  }
}

/**
 * Ensures the operator org and its admin client exist and are written to `$dataDir/operator-client.json`
 * with the service's URLs. Idempotent: a saved client that is still live is kept.
 */
export async function ensureOperatorClient(
  db: Db,
  options: { dataDir: string; baseUrl: string; authUrl: string },
): Promise<OperatorClient> {
  const saved = await readOperatorClient(options.dataDir)
  const live = saved ? await createRepos(db).clients.get(saved.client_id) : undefined
  let client: Omit<OperatorClient, 'token_url' | 'audience'>
  if (saved && live && live.revoked_at === null) client = saved
  else {
    const org = await createOrg(db, { name: 'Operators (embedded)', canAllowlist: false })
    const made = await createClient(db, { orgId: org.id, scopes: 'admin', name: 'embedded operator client' })
    client = { org_id: org.id, client_id: made.client_id, client_secret: made.client_secret }
  }
  const out = { ...client, token_url: `${options.authUrl}/oauth/token`, audience: options.baseUrl }
  await fs.mkdir(options.dataDir, { recursive: true })
  await fs.writeFile(path.join(options.dataDir, OPERATOR_CLIENT_FILE), `${JSON.stringify(out, null, 2)}\n`, {
    mode: 0o600,
  })
  return out
}

/**
 * The operator client of the `lsreport up` that holds this environment's embedded database right now, or
 * undefined (Postgres is shared by every process; no live holder; or a holder that wrote no operator client).
 */
export async function runningServiceClient(env: NodeJS.ProcessEnv): Promise<OperatorClient | undefined> {
  const config = loadConfig(env)
  if (config.databaseUrl) return undefined
  if (dataDirHolder(path.join(config.dataDir, 'pg')) === undefined) return undefined
  return readOperatorClient(config.dataDir)
}
