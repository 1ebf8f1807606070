import type { Queryable } from '../index.ts'

/** One row of `sol_allowlist`: a Solana address and the staking and redemption rights an organization gave it. */
export interface SolAllowlistRow {
  address: string
  staking: boolean
  redemption: boolean
  org_id: string
  created_at: Date
  updated_at: Date
}

/** The Solana allowlist (off-chain list kept by the service). */
export function createSolAllowlistRepo(db: Queryable) {
  return {
    /** The Solana allowlist entry of an address, or undefined. */
    async get(address: string): Promise<SolAllowlistRow | undefined> {
      return db<SolAllowlistRow>('sol_allowlist').where({ address }).first()
    },
    /** Inserts or updates the permissions; the first writer's created_at is kept, org_id is the latest writer. */
    async upsert(input: {
      address: string
      staking: boolean
      redemption: boolean
      orgId: string
    }): Promise<SolAllowlistRow> {
      const [row] = await db<SolAllowlistRow>('sol_allowlist')
        .insert({
          address: input.address,
          staking: input.staking,
          redemption: input.redemption,
          org_id: input.orgId,
        })
        .onConflict('address')
        .merge({
          staking: input.staking,
          redemption: input.redemption,
          org_id: input.orgId,
          updated_at: db.fn.now() as unknown as Date,
        })
        .returning('*')
      return row!
    },
  }
}
/** The Solana allowlist repository `createSolAllowlistRepo` returns. */
export type SolAllowlistRepo = ReturnType<typeof createSolAllowlistRepo>
