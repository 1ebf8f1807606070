import type { Knex } from 'knex'

/**
 * Webhook circuit breaker: a subscription counts its consecutive failed attempts (`consecutive_failures`,
 * since `failing_since`); after enough of them it is paused (`paused_at`): its deliveries wait, pending,
 * while one probe at `next_probe_at` (`probes` failed so far, the wait doubling) tries the receiver again.
 * A probe that succeeds, or its owner (POST /v1/webhooks/{id}/resume), resumes it. The partial index serves
 * the dispatcher's per-subscription pick of due deliveries.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('webhooks', (t) => {
    t.integer('consecutive_failures').notNullable().defaultTo(0)
    t.timestamp('failing_since', { useTz: true })
    t.timestamp('paused_at', { useTz: true })
    t.timestamp('next_probe_at', { useTz: true })
    t.integer('probes').notNullable().defaultTo(0)
  })
  await db.raw(
    `create index webhook_deliveries_pending_by_webhook
       on webhook_deliveries (webhook_id, next_attempt_at) where status = 'pending'`,
  )
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
