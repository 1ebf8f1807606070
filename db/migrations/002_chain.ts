import type { Knex } from 'knex'

/**
 * Indexed chain data. Every event row is keyed by (chain_id, block_number, log_index) and keeps its
 * block hash, tx hash and tx index, so a reorg can roll back everything past a fork point.
 * Amounts are numeric(78,0) (uint256, exact).
 */
export async function up(db: Knex): Promise<void> {
  const eventKey = (t: Knex.CreateTableBuilder) => {
    t.integer('chain_id').notNullable()
    t.bigInteger('block_number').notNullable()
    t.integer('log_index').notNullable()
    t.integer('tx_index').notNullable()
    t.text('block_hash').notNullable()
    t.text('tx_hash').notNullable()
    t.timestamp('block_time', { useTz: true }).notNullable()
  }
  const uint = (t: Knex.CreateTableBuilder, name: string) => t.decimal(name, 78, 0).notNullable()

  // Where each stream (one per contract) has been ingested up to, with that block's hash.
  await db.schema.createTable('chain_cursors', (t) => {
    t.integer('chain_id').notNullable()
    t.text('stream').notNullable()
    t.text('address').notNullable()
    t.bigInteger('block_number').notNullable()
    t.text('block_hash')
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.primary(['chain_id', 'stream'])
  })

  // Hashes (and times) of ingested blocks: reorg detection and block -> date.
  await db.schema.createTable('chain_blocks', (t) => {
    t.integer('chain_id').notNullable()
    t.bigInteger('number').notNullable()
    t.text('hash').notNullable()
    t.timestamp('time', { useTz: true }).notNullable()
    t.primary(['chain_id', 'number'])
  })

  await db.schema.createTable('lseth_transfers', (t) => {
    eventKey(t)
    t.text('from_address').notNullable()
    t.text('to_address').notNullable()
    uint(t, 'value')
    t.primary(['chain_id', 'block_number', 'log_index'])
    t.index(['chain_id', 'from_address'])
    t.index(['chain_id', 'to_address'])
  })

  await db.schema.createTable('user_deposits', (t) => {
    eventKey(t)
    t.text('depositor').notNullable()
    t.text('recipient').notNullable()
    uint(t, 'amount')
    t.primary(['chain_id', 'block_number', 'log_index'])
  })

  await db.schema.createTable('oracle_reports', (t) => {
    eventKey(t)
    t.date('report_date').notNullable()
    uint(t, 'epoch')
    uint(t, 'validators_balance')
    uint(t, 'validators_skimmed_balance')
    uint(t, 'validators_exited_balance')
    uint(t, 'validators_exiting_balance')
    t.integer('validators_count').notNullable()
    t.specificType('stopped_validator_count_per_operator', 'integer[]').notNullable()
    t.boolean('rebalance_deposit_to_redeem_mode').notNullable()
    t.boolean('slashing_containment_mode').notNullable()
    uint(t, 'trace_rewards')
    uint(t, 'trace_pulled_el_fees')
    uint(t, 'trace_pulled_redeem_manager_exceeding_eth')
    uint(t, 'trace_pulled_coverage_funds')
    // read with readContract at the report block: U and S after the report
    uint(t, 'total_underlying_supply')
    uint(t, 'total_supply')
    // fee shares minted in the report tx (RewardsEarned newTotalSupply - oldTotalSupply; 0 without it)
    uint(t, 'fee_shares')
    // global fee (bps) in force at the report
    t.integer('global_fee_bps').notNullable()
    t.primary(['chain_id', 'block_number', 'log_index'])
    t.index(['chain_id', 'report_date'])
  })

  await db.schema.createTable('rewards_earned', (t) => {
    eventKey(t)
    t.text('collector').notNullable()
    uint(t, 'old_total_underlying_balance')
    uint(t, 'old_total_supply')
    uint(t, 'new_total_underlying_balance')
    uint(t, 'new_total_supply')
    t.primary(['chain_id', 'block_number', 'log_index'])
  })

  await db.schema.createTable('global_fee_changes', (t) => {
    eventKey(t)
    t.integer('fee_bps').notNullable()
    t.primary(['chain_id', 'block_number', 'log_index'])
  })

  await db.schema.createTable('redeem_requests', (t) => {
    eventKey(t)
    t.bigInteger('request_id').notNullable()
    t.text('recipient').notNullable()
    uint(t, 'height')
    uint(t, 'amount')
    uint(t, 'max_redeemable_eth')
    t.primary(['chain_id', 'block_number', 'log_index'])
    t.unique(['chain_id', 'request_id'])
    t.index(['chain_id', 'recipient'])
  })

  await db.schema.createTable('withdrawal_events', (t) => {
    eventKey(t)
    t.bigInteger('withdrawal_event_id').notNullable()
    uint(t, 'height')
    uint(t, 'amount')
    uint(t, 'eth_amount')
    t.primary(['chain_id', 'block_number', 'log_index'])
    t.unique(['chain_id', 'withdrawal_event_id'])
  })

  await db.schema.createTable('redeem_satisfactions', (t) => {
    eventKey(t)
    t.bigInteger('request_id').notNullable()
    t.bigInteger('withdrawal_event_id').notNullable()
    uint(t, 'lseth_amount_satisfied')
    uint(t, 'eth_amount_satisfied')
    uint(t, 'lseth_amount_remaining')
    uint(t, 'eth_amount_exceeding')
    t.primary(['chain_id', 'block_number', 'log_index'])
    t.index(['chain_id', 'request_id'])
  })

  await db.schema.createTable('redeem_claims', (t) => {
    eventKey(t)
    t.bigInteger('request_id').notNullable()
    t.text('recipient').notNullable()
    uint(t, 'eth_amount')
    uint(t, 'lseth_amount')
    uint(t, 'remaining_lseth_amount')
    t.primary(['chain_id', 'block_number', 'log_index'])
    t.index(['chain_id', 'request_id'])
  })

  // One row per (event, position in the arrays).
  await db.schema.createTable('allowlist_permissions', (t) => {
    eventKey(t)
    t.integer('position').notNullable()
    t.text('address').notNullable()
    uint(t, 'permissions')
    t.primary(['chain_id', 'block_number', 'log_index', 'position'])
    t.index(['chain_id', 'address'])
  })
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
