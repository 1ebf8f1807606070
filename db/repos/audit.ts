import type { Queryable } from '../index.ts'

/** One row of `status_changes`: an account or wallet status change, who made it and why. */
export interface StatusChangeRow {
  id: string
  entity: 'account' | 'wallet'
  entity_id: string
  from_status: string | null
  to_status: string
  actor: string
  reason: string | null
  created_at: Date
}

/** Audit trail of account and wallet status changes (who, when, from, to). */
export function createAuditRepo(db: Queryable) {
  return {
    /** Records one status change of an account or wallet (from null on creation). */
    async record(change: {
      entity: 'account' | 'wallet'
      entityId: string
      from: string | null
      to: string
      actor: string
      reason?: string
    }): Promise<void> {
      await db('status_changes').insert({
        entity: change.entity,
        entity_id: change.entityId,
        from_status: change.from,
        to_status: change.to,
        actor: change.actor,
        reason: change.reason ?? null,
      })
    },
    /** The status changes of one account or wallet, oldest first. */
    async list(entity: 'account' | 'wallet', entityId: string): Promise<StatusChangeRow[]> {
      return db<StatusChangeRow>('status_changes').where({ entity, entity_id: entityId }).orderBy('id')
    },
  }
}
/** The audit repository `createAuditRepo` returns. */
export type AuditRepo = ReturnType<typeof createAuditRepo>
