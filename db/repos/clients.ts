import { randomUUID } from 'node:crypto'
import type { Queryable } from '../index.ts'

export interface ClientRow {
  id: string
  org_id: string
  name: string
  scopes: string
  created_at: Date
  revoked_at: Date | null
}

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
    async create(
      input: { id: string; orgId: string; name: string; scopes: string[]; secretHash: string },
      tx: Queryable = db,
    ): Promise<ClientRow> {
      const [row] = await tx<ClientRow>('api_clients')
        .insert({ id: input.id, org_id: input.orgId, name: input.name, scopes: input.scopes.join(' ') })
        .returning('*')
      await tx('api_client_secrets').insert({
        id: randomUUID(),
        client_id: input.id,
        secret_hash: input.secretHash,
      })
      return row!
    },
    async addSecret(clientId: string, secretHash: string, tx: Queryable = db): Promise<void> {
      await tx('api_client_secrets').insert({
        id: randomUUID(),
        client_id: clientId,
        secret_hash: secretHash,
      })
    },
    async get(id: string, tx: Queryable = db): Promise<ClientRow | undefined> {
      return tx<ClientRow>('api_clients').where({ id }).first()
    },
    /** The client's secrets that are not revoked. */
    async activeSecrets(clientId: string, tx: Queryable = db): Promise<ClientSecretRow[]> {
      return tx<ClientSecretRow>('api_client_secrets').where({ client_id: clientId }).whereNull('revoked_at')
    },
    async revoke(id: string, tx: Queryable = db): Promise<boolean> {
      const n = await tx('api_clients')
        .where({ id })
        .whereNull('revoked_at')
        .update({ revoked_at: tx.fn.now() })
      return n > 0
    },
  }
}
export type ClientsRepo = ReturnType<typeof createClientsRepo>
