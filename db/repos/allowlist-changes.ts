import type { Knex } from 'knex'
import type { Queryable } from '../index.ts'

/** Where a queued Allowlist change stands: pending, submitted (tx sent), confirmed, failed or superseded. */
export type AllowlistChangeState = 'pending' | 'submitted' | 'confirmed' | 'failed' | 'superseded'

/** One row of `allowlist_changes`: a permission mask the writer must set on chain for an address. */
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
  /** Why the latest try failed (a revert in words); kept on a pending change that waits for its retry. */
  error: string | null
  /** A pending change whose write reverted is not tried again before this time (null: at once). */
  retry_at: Date | null
  created_at: Date
  updated_at: Date
}

const TABLE = 'allowlist_changes'

type Patch = Partial<Pick<AllowlistChangeRow, 'state' | 'tx_hash' | 'error' | 'attempts'>> & {
  retry_at?: Date | null | Knex.Raw
}

/** The text every wallet `status_reason` the allowlist writer sets begins with (chain-sync clears them when a change lands). */
export const ALLOWLIST_CHANGE_REASON_PREFIX = 'allowlist change ('

/** The database's time plus `delayMs`: when a deferred change is tried again. */
function retryAt(db: Queryable, delayMs: number): Knex.Raw {
  return db.raw(`now() + make_interval(secs => ?)`, [delayMs / 1000])
}

/** Rows of `tx` for which a newer change (any state) exists for the same address. */
function newerExists(tx: Queryable, alias: string) {
  return tx(`${TABLE} as newer`)
    .select(tx.raw('1'))
    .whereRaw(`newer.address = ${alias}.address`)
    .andWhereRaw(`newer.id > ${alias}.id`)
}

/**
 * Updates the rows the `select` names, locking them first in ascending id order: the one order in which
 * anything locks several rows of this table, so two statements or transactions never wait on each other
 * in a cycle ("deadlock detected"). `skipLocked`: rows another transaction holds are left alone.
 */
async function updateInIdOrder(
  tx: Queryable,
  select: (q: Knex.QueryBuilder) => Knex.QueryBuilder,
  patch: Patch,
  options: { skipLocked?: boolean } = {},
): Promise<number> {
  const locked = select(tx(`${TABLE} as c`).select('c.id'))
    .orderBy('c.id')
    .forUpdate()
  if (options.skipLocked) locked.skipLocked()
  return tx(TABLE)
    .whereIn('id', locked)
    .update({ ...patch, updated_at: tx.fn.now() })
}

/**
 * On-chain permission changes: the target mask of a wallet, one row per intent. The API enqueues them; the
 * allowlist writer sends them with `setAllowPermissions` and settles them. Only the latest intent of an
 * address is ever sent: a newer change supersedes the older pending one when it is enqueued, the writer
 * claims only rows that have no newer change, and an older row whose transaction never reached the chain
 * is superseded rather than sent again.
 *
 * Lock order: every statement that locks several rows locks them in ascending id order, and the writer's
 * claim skips rows another transaction holds, so it never waits while holding locks.
 */
export function createAllowlistChangesRepo(db: Queryable) {
  return {
    /** Queues the permission mask to write for an address, superseding its pending changes; returns the new row. */
    async enqueue(change: {
      walletId: string
      address: string
      permissions: bigint
      reason: string
    }): Promise<AllowlistChangeRow> {
      await updateInIdOrder(db, (q) => q.where({ 'c.address': change.address, 'c.state': 'pending' }), {
        state: 'superseded',
      })
      const [row] = await db<AllowlistChangeRow>(TABLE)
        .insert({
          wallet_id: change.walletId,
          address: change.address,
          permissions: change.permissions.toString(),
          reason: change.reason,
        })
        .returning('*')
      return row!
    },

    /**
     * Pending changes that are the latest intent of their address (oldest first), but those waiting for a retry
     * (`retry_at` still ahead).
     */
    async pending(limit: number): Promise<AllowlistChangeRow[]> {
      return db<AllowlistChangeRow>(`${TABLE} as c`)
        .select('c.*')
        .where('c.state', 'pending')
        .where((q) => q.whereNull('c.retry_at').orWhere('c.retry_at', '<=', db.fn.now()))
        .whereNotExists(newerExists(db, 'c'))
        .orderBy('c.id')
        .limit(limit)
    },

    /**
     * Locks (in id order, skipping rows another transaction holds) those of `ids` that are still pending
     * and still the latest intent of their address. Call on the repositories of the transaction that marks them
     * submitted (`inTransaction`).
     */
    async claim(ids: string[]): Promise<AllowlistChangeRow[]> {
      if (ids.length === 0) return []
      return db<AllowlistChangeRow>(`${TABLE} as c`)
        .select('c.*')
        .whereIn('c.id', ids)
        .where('c.state', 'pending')
        .whereNotExists(newerExists(db, 'c'))
        .orderBy('c.id')
        .forUpdate()
        .skipLocked()
    },

    /** Pending changes that a newer change of the same address replaced: marked superseded, never sent. */
    async supersedeStale(): Promise<number> {
      return updateInIdOrder(
        db,
        (q) => q.where('c.state', 'pending').whereExists(newerExists(db, 'c')),
        { state: 'superseded' },
        { skipLocked: true },
      )
    },

    /** Changes sent whose outcome is not settled yet. */
    async submitted(): Promise<AllowlistChangeRow[]> {
      return db<AllowlistChangeRow>(TABLE).where({ state: 'submitted' }).orderBy('id')
    },

    /** Marks the given submitted changes confirmed (a mined, successful transaction). */
    async confirmSubmitted(ids: string[]): Promise<void> {
      if (ids.length === 0) return
      await updateInIdOrder(db, (q) => q.whereIn('c.id', ids).where('c.state', 'submitted'), {
        state: 'confirmed',
      })
    },

    /**
     * Submitted changes whose transaction will not land (the node never saw it, or it reverted): each is
     * superseded when its address has a newer change, else pending again (without its hash) to be sent anew;
     * `retry` (a reverted transaction) records why and when to try again.
     */
    async requeue(
      ids: string[],
      retry?: { error: string; delayMs: number },
    ): Promise<{ superseded: number; pending: number }> {
      if (ids.length === 0) return { superseded: 0, pending: 0 }
      const superseded = await updateInIdOrder(
        db,
        (q) => q.whereIn('c.id', ids).where('c.state', 'submitted').whereExists(newerExists(db, 'c')),
        { state: 'superseded' },
      )
      const pending = await updateInIdOrder(db, (q) => q.whereIn('c.id', ids).where('c.state', 'submitted'), {
        state: 'pending',
        tx_hash: null,
        ...(retry ? { error: retry.error, retry_at: retryAt(db, retry.delayMs) } : {}),
      })
      return { superseded, pending }
    },

    /**
     * Pending changes whose write reverted for a reason a retry may cure: they stay pending with the reason and
     * one more attempt, and wait `delayMs` before the next try.
     */
    async defer(ids: string[], retry: { error: string; delayMs: number; attempts: number }): Promise<void> {
      if (ids.length === 0) return
      await updateInIdOrder(db, (q) => q.whereIn('c.id', ids).where('c.state', 'pending'), {
        error: retry.error,
        attempts: retry.attempts,
        retry_at: retryAt(db, retry.delayMs),
      })
    },

    /**
     * The chain shows that transaction `txHash` set `permissions` for `address`: the changes of that address
     * sent in that transaction are confirmed. Matching by transaction (not by mask) keeps a late event from
     * confirming a newer change that asks the same mask but was not sent yet. Returns how many were confirmed.
     */
    async confirmSeen(address: string, permissions: bigint, txHash: string): Promise<number> {
      return updateInIdOrder(
        db,
        (q) =>
          q
            .where({ 'c.address': address, 'c.permissions': permissions.toString() })
            .whereRaw('lower(c.tx_hash) = ?', [txHash.toLowerCase()])
            .whereIn('c.state', ['pending', 'submitted']),
        { state: 'confirmed' },
      )
    },

    /** Every change queued for a wallet, oldest first. */
    async forWallet(walletId: string): Promise<AllowlistChangeRow[]> {
      return db<AllowlistChangeRow>(TABLE).where({ wallet_id: walletId }).orderBy('id')
    },

    /** Applies `patch` (state, tx hash, error, attempts) to the changes with these ids, locking in id order. */
    async mark(ids: string[], patch: Patch): Promise<void> {
      if (ids.length === 0) return
      await updateInIdOrder(db, (q) => q.whereIn('c.id', ids), patch)
    },
  }
}
/** The allowlist-changes repository `createAllowlistChangesRepo` returns. */
export type AllowlistChangesRepo = ReturnType<typeof createAllowlistChangesRepo>
