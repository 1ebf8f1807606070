import type { Knex } from 'knex'

/**
 * The restatement log (README "For finance"): one row per published version of a day, with what it held
 * (content hash, engine version), why it was made (first, reorg, discount, fee schedule, engine upgrade,
 * predecessor restated, recompute requested) and when it was visible (visible_from, until the next one's;
 * millisecond precision, the precision of `as_of`). A superseded version keeps its records, so a read
 * `as_of` a moment answers what was visible then. Versions published before this migration get one row each
 * (reason 'first', visible from when they were computed).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('report_versions', (t) => {
    t.integer('chain_id').notNullable()
    t.bigInteger('report_epoch').notNullable()
    t.integer('version').notNullable()
    t.text('content_hash').notNullable()
    t.text('engine_version').notNullable()
    t.text('reason').notNullable()
    t.integer('previous_version')
    t.timestamp('visible_from', { useTz: true, precision: 3 }).notNullable()
    t.timestamp('visible_until', { useTz: true, precision: 3 })
    t.primary(['chain_id', 'report_epoch', 'version'])
    t.index(['chain_id', 'visible_from'])
  })
  await db.raw(`
    insert into report_versions (chain_id, report_epoch, version, content_hash, engine_version, reason, visible_from)
    select chain_id, report_epoch, visible_version, coalesce(content_hash, ''), coalesce(engine_version, ''), 'first',
      date_trunc('milliseconds', coalesce(computed_at, requested_at))
    from days where visible_version is not null`)
}

/** Drops the log (superseded versions' records stay until the next run of their day deletes them). */
export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('report_versions')
}
