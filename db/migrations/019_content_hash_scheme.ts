import type { Knex } from 'knex'

/**
 * The scheme of each day's and each logged version's content hash (jobs/days/content-hash.ts): 2 for a hash
 * of the records alone, whatever the shard layout. Hashes stored before are left as they are, their scheme
 * null (they hashed the shards' hashes, so they depend on the shard count): a recompute compares its records
 * with such a version by hashing that version's stored records under scheme 2 (docs/decisions.md), so the
 * upgrade itself publishes nothing.
 */
export async function up(db: Knex): Promise<void> {
  for (const table of ['days', 'report_versions']) {
    await db.schema.alterTable(table, (t) => {
      t.smallint('content_hash_scheme')
    })
  }
}

/** Drops the columns (the hashes stay). */
export async function down(db: Knex): Promise<void> {
  for (const table of ['days', 'report_versions']) {
    await db.schema.alterTable(table, (t) => {
      t.dropColumn('content_hash_scheme')
    })
  }
}
