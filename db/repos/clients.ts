import { randomUUID } from 'node:crypto'
import { StateError } from '../../common/errors.ts'
import type { Queryable } from '../index.ts'

/** One row of `api_clients`: an API client of an organization, its scopes and revocation time. */
export interface ClientRow {
  id: string
  org_id: string
  name: string
  scopes: string
  created_at: Date
  revoked_at: Date | null
}

/** One row of `api_client_secrets`: a hashed secret of a client (several may be live during a rotation). */
export interface ClientSecretRow {
  id: string
  client_id: string
  secret_hash: string
  created_at: Date
  revoked_at: Date | null
}

/** API clients (OAuth2 client credentials) and their hashed secrets (several per client for rotation). */
export function createClientsRepo(db: Queryable) {
  return {
    /**
     * Creates an API client with its first hashed secret; returns the client row. Refused (a `StateError`,
     * reason `tenant_limit`, naming MAX_CLIENTS_PER_ORG) when the organization has `limit` live clients: the
     * count and the insert run under a lock of the organization's row, so creates at once never pass it.
     */
    async create(input: {
      id: string
      orgId: string
      name: string
      scopes: string[]
      secretHash: string
      limit: number
    }): Promise<ClientRow> {
      return db.transaction(async (tx) => {
        await tx('orgs').where({ id: input.orgId }).forUpdate().first('id')
        const [counted] = await tx('api_clients')
          .where({ org_id: input.orgId })
          .whereNull('revoked_at')
          .count({ n: '*' })
        const count = Number(counted?.n ?? 0)
        if (count >= input.limit) {
          throw new StateError(
            `organization ${input.orgId} has ${count} live API clients, its limit ` +
              `(MAX_CLIENTS_PER_ORG=${input.limit}): revoke one first (\`lsreport clients revoke\`)`,
            { reason: 'tenant_limit', details: { limit: input.limit, setting: 'MAX_CLIENTS_PER_ORG' } },
          )
        }
        const [row] = await tx<ClientRow>('api_clients')
          .insert({ id: input.id, org_id: input.orgId, name: input.name, scopes: input.scopes.join(' ') })
          .returning('*')
        await tx('api_client_secrets').insert({
          id: randomUUID(),
          client_id: input.id,
          secret_hash: input.secretHash,
        })
        return row!
      })
    },
    /**
     * Adds a hashed secret to a live client (rotation: the old ones stay until revoked). Refused (a
     * `StateError`, reason `tenant_limit`, naming MAX_SECRETS_PER_CLIENT) when it has `limit` live secrets,
     * counted under a lock of the client's row. False when the client is unknown or revoked.
     */
    async addSecret(clientId: string, secretHash: string, limit: number): Promise<boolean> {
      return db.transaction(async (tx) => {
        const client = await tx('api_clients')
          .where({ id: clientId })
          .whereNull('revoked_at')
          .forUpdate()
          .first('id')
        if (!client) return false
        const [counted] = await tx('api_client_secrets')
          .where({ client_id: clientId })
          .whereNull('revoked_at')
          .count({ n: '*' })
        const count = Number(counted?.n ?? 0)
        if (count >= limit) {
          throw new StateError(
            `client ${clientId} has ${count} live secrets, its limit (MAX_SECRETS_PER_CLIENT=${limit}): revoke ` +
              `the older ones first (\`lsreport clients revoke-old-secrets ${clientId}\`)`,
            { reason: 'tenant_limit', details: { limit, setting: 'MAX_SECRETS_PER_CLIENT' } },
          )
        }
        await tx('api_client_secrets').insert({
          id: randomUUID(),
          client_id: clientId,
          secret_hash: secretHash,
        })
        return true
      })
    },
    /**
     * Revokes every live secret of a client but its newest (the end of a rotation); returns how many. The
     * tokens issued before stay valid until they expire (a token is the client's, not a secret's).
     */
    async revokeOlderSecrets(clientId: string): Promise<number> {
      const newest = db('api_client_secrets')
        .where({ client_id: clientId })
        .whereNull('revoked_at')
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(1)
        .select('id')
      return db('api_client_secrets')
        .where({ client_id: clientId })
        .whereNull('revoked_at')
        .whereNotIn('id', newest)
        .update({ revoked_at: db.fn.now() })
    },
    /** The client with this id, revoked or not, or undefined. */
    async get(id: string): Promise<ClientRow | undefined> {
      return db<ClientRow>('api_clients').where({ id }).first()
    },
    /**
     * A client and the hashes of its active secrets in one query (the same query whether or not the
     * client exists, so the token endpoint's timing does not tell). Undefined when no such client.
     */
    async credentials(id: string): Promise<{ client: ClientRow; secretHashes: string[] } | undefined> {
      const rows = await db('api_clients as c')
        .leftJoin('api_client_secrets as s', (j) =>
          j.on('s.client_id', '=', 'c.id').andOnNull('s.revoked_at'),
        )
        .where('c.id', id)
        .select('c.*', 's.secret_hash')
      const first = rows[0] as (ClientRow & { secret_hash: string | null }) | undefined
      if (!first) return undefined
      const { secret_hash: _, ...client } = first
      return {
        client,
        secretHashes: rows
          .map((r: { secret_hash: string | null }) => r.secret_hash)
          .filter((h): h is string => h !== null),
      }
    },
    /** What the token check needs per request: the client's org and whether it is revoked. */
    async status(id: string): Promise<{ orgId: string; revoked: boolean } | undefined> {
      const row = await db<ClientRow>('api_clients').where({ id }).first('org_id', 'revoked_at')
      return row ? { orgId: row.org_id, revoked: row.revoked_at !== null } : undefined
    },
    /** The client's secrets that are not revoked. */
    async activeSecrets(clientId: string): Promise<ClientSecretRow[]> {
      return db<ClientSecretRow>('api_client_secrets').where({ client_id: clientId }).whereNull('revoked_at')
    },
    /** Revokes a client; true when it was live, false when unknown or already revoked. */
    async revoke(id: string): Promise<boolean> {
      const n = await db('api_clients')
        .where({ id })
        .whereNull('revoked_at')
        .update({ revoked_at: db.fn.now() })
      return n > 0
    },
  }
}
/** The clients repository `createClientsRepo` returns. */
export type ClientsRepo = ReturnType<typeof createClientsRepo>
