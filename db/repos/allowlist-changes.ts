import type { Queryable } from '../index.ts'

export type AllowlistChangeState = 'pending' | 'submitted' | 'confirmed' | 'failed' | 'superseded'

export interface AllowlistChangeRow {
  id: string
  wallet_id: string
  address: string
  /** Target permission mask as a decimal string (numeric(78,0)). */
  permissions: string
  reason: string
  state: AllowlistChangeState
  attempts: number
  tx_hash: string | null
  error: string | null
  created_at: Date
  updated_at: Date
}

/**
 * Pending on-chain permission changes. The API enqueues the target mask of a wallet; the allowlist
 * writer batches pending rows into `setAllowPermissions` and settles them. A newer change for the same
 * address supersedes an older pending one, so only the latest intent reaches the chain.
 */
export function createAllowlistChangesRepo(db: Queryable) {
  return {
    async enqueue(
      change: { walletId: string; address: string; permissions: bigint; reason: string },
      tx: Queryable = db,
    ): Promise<AllowlistChangeRow> {
      await tx('allowlist_changes')
        .where({ address: change.address, state: 'pending' })
        .update({ state: 'superseded', updated_at: tx.fn.now() })
      const [row] = await tx<AllowlistChangeRow>('allowlist_changes')
        .insert({
          wallet_id: change.walletId,
          address: change.address,
          permissions: change.permissions.toString(),
          reason: change.reason,
        })
        .returning('*')
      return row!
    },
    async pending(limit: number, tx: Queryable = db): Promise<AllowlistChangeRow[]> {
      return tx<AllowlistChangeRow>('allowlist_changes')
        .where({ state: 'pending' })
        .orderBy('id')
        .limit(limit)
    },
    /** Changes sent whose outcome is not settled yet. */
    async submitted(tx: Queryable = db): Promise<AllowlistChangeRow[]> {
      return tx<AllowlistChangeRow>('allowlist_changes').where({ state: 'submitted' }).orderBy('id')
    },
    /** Marks the given submitted changes confirmed (a mined, successful transaction). */
    async confirmSubmitted(ids: string[], tx: Queryable = db): Promise<void> {
      if (ids.length === 0) return
      await tx('allowlist_changes')
        .whereIn('id', ids)
        .where({ state: 'submitted' })
        .update({ state: 'confirmed', updated_at: tx.fn.now() })
    },
    /** The chain shows `permissions` for `address`: open changes asking exactly that are confirmed by `txHash`. */
    async confirmSeen(
      address: string,
      permissions: bigint,
      txHash: string,
      tx: Queryable = db,
    ): Promise<void> {
      await tx('allowlist_changes')
        .where({ address, permissions: permissions.toString() })
        .whereIn('state', ['pending', 'submitted'])
        .update({ state: 'confirmed', tx_hash: txHash, updated_at: tx.fn.now() })
    },
    async forWallet(walletId: string, tx: Queryable = db): Promise<AllowlistChangeRow[]> {
      return tx<AllowlistChangeRow>('allowlist_changes').where({ wallet_id: walletId }).orderBy('id')
    },
    async mark(
      ids: string[],
      patch: Partial<Pick<AllowlistChangeRow, 'state' | 'tx_hash' | 'error' | 'attempts'>>,
      tx: Queryable = db,
    ): Promise<void> {
      if (ids.length === 0) return
      await tx('allowlist_changes')
        .whereIn('id', ids)
        .update({ ...patch, updated_at: tx.fn.now() })
    },
  }
}
export type AllowlistChangesRepo = ReturnType<typeof createAllowlistChangesRepo>
