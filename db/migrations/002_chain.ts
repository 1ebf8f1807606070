import type { Knex } from 'knex'

/**
 * An event table's own columns after the event key, as `name type` pairs (`uint` is numeric(78,0), an
 * uint256; every column is NOT NULL), then the (chain_id, column) lookups it needs: a unique one and indexes.
 */
interface EventTable {
  columns: string
  unique?: string
  indexes?: string[]
  /** Added to the event key when one event makes several rows. */
  position?: boolean
}

/**
 * The indexed events, one table each. oracle_reports: U and S after the report are read at its block;
 * fee_shares are the shares minted in the report tx (RewardsEarned new - old total supply; 0 without it);
 * global_fee_bps is the global fee in force at the report. allowlist_permissions: one row per (event,
 * position in the arrays).
 */
const EVENT_TABLES: Record<string, EventTable> = {
  lseth_transfers: {
    columns: 'from_address text, to_address text, value uint',
    indexes: ['from_address', 'to_address'],
  },
  user_deposits: { columns: 'depositor text, recipient text, amount uint' },
  oracle_reports: {
    columns:
      'report_date date, epoch uint, validators_balance uint, validators_skimmed_balance uint, ' +
      'validators_exited_balance uint, validators_exiting_balance uint, validators_count integer, ' +
      'stopped_validator_count_per_operator integer[], rebalance_deposit_to_redeem_mode boolean, ' +
      'slashing_containment_mode boolean, trace_rewards uint, trace_pulled_el_fees uint, ' +
      'trace_pulled_redeem_manager_exceeding_eth uint, trace_pulled_coverage_funds uint, ' +
      'total_underlying_supply uint, total_supply uint, fee_shares uint, global_fee_bps integer',
    indexes: ['report_date'],
  },
  rewards_earned: {
    columns:
      'collector text, old_total_underlying_balance uint, old_total_supply uint, ' +
      'new_total_underlying_balance uint, new_total_supply uint',
  },
  global_fee_changes: { columns: 'fee_bps integer' },
  redeem_requests: {
    columns: 'request_id bigint, recipient text, height uint, amount uint, max_redeemable_eth uint',
    unique: 'request_id',
    indexes: ['recipient'],
  },
  withdrawal_events: {
    columns: 'withdrawal_event_id bigint, height uint, amount uint, eth_amount uint',
    unique: 'withdrawal_event_id',
  },
  redeem_satisfactions: {
    columns:
      'request_id bigint, withdrawal_event_id bigint, lseth_amount_satisfied uint, eth_amount_satisfied uint, ' +
      'lseth_amount_remaining uint, eth_amount_exceeding uint',
    indexes: ['request_id'],
  },
  redeem_claims: {
    columns:
      'request_id bigint, recipient text, eth_amount uint, lseth_amount uint, remaining_lseth_amount uint',
    indexes: ['request_id'],
  },
  allowlist_permissions: {
    columns: 'position integer, address text, permissions uint',
    indexes: ['address'],
    position: true,
  },
}

/** Adds one `name type` column (NOT NULL) of an event table. */
function addColumn(t: Knex.CreateTableBuilder, spec: string): void {
  const [name = '', type] = spec.trim().split(' ')
  if (type === 'uint') t.decimal(name, 78, 0).notNullable()
  else if (type === 'bigint') t.bigInteger(name).notNullable()
  else if (type === 'integer') t.integer(name).notNullable()
  else if (type === 'integer[]') t.specificType(name, 'integer[]').notNullable()
  else if (type === 'text' || type === 'boolean' || type === 'date') t[type](name).notNullable()
  else throw new Error(`event column ${spec}: unknown type`)
}

/** Creates one event table: the event key (with the block and tx it came in), its columns, its lookups. */
async function createEventTable(db: Knex, name: string, table: EventTable): Promise<void> {
  await db.schema.createTable(name, (t) => {
    t.integer('chain_id').notNullable()
    t.bigInteger('block_number').notNullable()
    t.integer('log_index').notNullable()
    t.integer('tx_index').notNullable()
    t.text('block_hash').notNullable()
    t.text('tx_hash').notNullable()
    t.timestamp('block_time', { useTz: true }).notNullable()
    for (const spec of table.columns.split(',')) addColumn(t, spec)
    t.primary(['chain_id', 'block_number', 'log_index', ...(table.position ? ['position'] : [])])
    if (table.unique) t.unique(['chain_id', table.unique])
    for (const column of table.indexes ?? []) t.index(['chain_id', column])
  })
}

/**
 * Indexed chain data. Every event row is keyed by (chain_id, block_number, log_index) and keeps its
 * block hash, tx hash and tx index, so a reorg can roll back everything past a fork point.
 * Amounts are numeric(78,0) (uint256, exact).
 */
export async function up(db: Knex): Promise<void> {
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

  for (const [name, table] of Object.entries(EVENT_TABLES)) await createEventTable(db, name, table)
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
