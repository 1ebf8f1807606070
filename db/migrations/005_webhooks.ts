import type { Knex } from 'knex'

/**
 * Webhooks: an organization's subscriptions, the outbox of events (written in the transaction of the fact
 * they announce, one row per fact thanks to `fact_key`) and one delivery per (event, subscription) with its
 * outcome (`status` pending | succeeded | failed, `attempts`), which the delivery jobs and metrics read.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('webhooks', (t) => {
    t.uuid('id').primary()
    t.text('org_id').notNullable().references('orgs.id')
    t.text('url').notNullable()
    t.specificType('events', 'text[]').notNullable()
    t.text('description')
    // whsec_<base64>: kept to sign deliveries, shown once when the webhook is created
    t.text('secret').notNullable()
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.index(['org_id', 'created_at'])
  })

  await db.schema.createTable('webhook_events', (t) => {
    // evt_...: the webhook-id header, the same for every delivery and retry of the event
    t.text('id').primary()
    // what the event announces, e.g. day.finalized:1:123:v2; a fact emits one event
    t.text('fact_key').notNullable().unique()
    t.text('type').notNullable()
    // the owning organization; null: every subscribed organization (day.finalized)
    t.text('org_id')
    // the JSON body sent, as signed
    t.text('body').notNullable()
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
  })

  await db.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary()
    t.text('event_id').notNullable().references('webhook_events.id')
    t.uuid('webhook_id').notNullable().references('webhooks.id').onDelete('CASCADE')
    t.text('status').notNullable().defaultTo('pending')
    t.integer('attempts').notNullable().defaultTo(0)
    t.timestamp('next_attempt_at', { useTz: true })
    // retries stop (status failed) once this plus the retry window has passed; a replay resets it
    t.timestamp('window_started_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.timestamp('last_attempt_at', { useTz: true })
    t.integer('last_status_code')
    t.text('last_error')
    t.timestamp('delivered_at', { useTz: true })
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.unique(['event_id', 'webhook_id'])
    t.index(['status', 'next_attempt_at'])
    t.index(['webhook_id', 'created_at'])
  })
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
