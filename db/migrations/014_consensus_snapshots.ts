import type { Knex } from 'knex'

/**
 * The latest consensus-layer snapshot per chain (chain/beacon.ts `ConsensusSnapshot`), written by the
 * `consensus` job (jobs/consensus.ts) from the Beacon API or the devnet's facts file, and read by the API's
 * exit queue and projections, which never reach the consensus node themselves. Balances in Gwei (the Beacon
 * API unit) as numeric(78,0); `read_at` is when the job read the figures from their source.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('consensus_snapshots', (t) => {
    t.integer('chain_id').primary()
    t.bigInteger('epoch').notNullable()
    t.integer('active_validators').notNullable()
    t.decimal('total_active_balance_gwei', 78, 0).notNullable()
    t.decimal('queued_exit_balance_gwei', 78, 0).notNullable()
    t.integer('sweep_eligible_validators').notNullable()
    t.text('source').notNullable()
    t.timestamp('read_at', { useTz: true, precision: 3 }).notNullable()
  })
  await db.raw(
    `alter table consensus_snapshots add constraint consensus_snapshots_source_check
       check (source in ('beacon', 'devnet'))`,
  )
}

/** Drops the table (the exit queue and projections have no consensus figures until it is back). */
export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('consensus_snapshots')
}
