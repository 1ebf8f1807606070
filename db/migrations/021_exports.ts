import type { Knex } from 'knex'

/**
 * Exports as jobs (issue 38): an organization's export requests (`exports`: the spec it asked for, its state
 * queued | running | completed | failed, progress, and once completed its rows, bytes and sha256) and the file
 * itself in the database (`export_chunks`: ordered ~1 MiB pieces), so an API process on another machine than
 * the worker serves it, on Postgres and on the embedded PGlite alike. A file is kept until `expires_at`
 * (completed_at + 7 days, docs/interface.md "Exports"); the dispatch job deletes expired exports with their
 * chunks (`on delete cascade`).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('exports', (t) => {
    t.uuid('id').primary()
    t.text('org_id').notNullable().references('orgs.id')
    t.integer('chain_id').notNullable()
    // the API client that asked for it (the token's subject)
    t.text('client_id').notNullable()
    // the ExportSpec (jobs/exports/build.ts) as the API checked it, minus chain and org
    t.jsonb('spec').notNullable()
    t.text('state').notNullable().defaultTo('queued')
    t.bigInteger('progress_done').notNullable().defaultTo(0)
    t.bigInteger('progress_total').notNullable().defaultTo(0)
    t.bigInteger('rows')
    t.bigInteger('bytes')
    t.text('sha256')
    t.text('error')
    // the attempt that last started building it (a retried job starts the file over)
    t.integer('attempts').notNullable().defaultTo(0)
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.timestamp('completed_at', { useTz: true })
    t.timestamp('expires_at', { useTz: true })
    t.index(['org_id', 'created_at'])
    t.index(['state', 'created_at'])
    t.index(['expires_at'])
  })
  await db.raw(
    `alter table exports add constraint exports_state_check
       check (state in ('queued', 'running', 'completed', 'failed'))`,
  )
  await db.schema.createTable('export_chunks', (t) => {
    t.uuid('export_id').notNullable().references('exports.id').onDelete('CASCADE')
    t.integer('seq').notNullable()
    t.binary('data').notNullable()
    t.primary(['export_id', 'seq'])
  })
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
