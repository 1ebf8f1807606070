import type { Knex } from 'knex'

/**
 * When the allowlist writer tries a change again: a change whose write reverted for a reason a retry may cure (a
 * role being restored, an upgrade underway, a revert without a reason) stays pending with its error and waits
 * until `retry_at` (null: now).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('allowlist_changes', (t) => {
    t.timestamp('retry_at', { useTz: true })
  })
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
