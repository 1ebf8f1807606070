import { readFileSync } from 'node:fs'
import type { Knex } from 'knex'
import {
  FEE_AMOUNT_COLUMNS,
  FEE_RATE_COLUMNS,
  WALLET_AMOUNT_COLUMNS_OF_003 as WALLET_AMOUNT_COLUMNS,
  WALLET_RATE_COLUMNS,
} from '../records/columns.ts'

/** The default fee schedules (validated by the engine when a day loads them). */
function feeScheduleSeed(): {
  id: string
  model: string
  effective_from: string
  shares: object
  note?: string
}[] {
  const url = new URL('../../fixtures/fee-schedules.json', import.meta.url)
  return JSON.parse(readFileSync(url, 'utf8')).schedules
}

/** A wei amount column: `numeric(78,0) not null`. */
const amount = (t: Knex.CreateTableBuilder, name: string) => t.decimal(name, 78, 0).notNullable()

/** The key of a day's version: chain id, report epoch, version. */
const dayKey = (t: Knex.CreateTableBuilder) => {
  t.integer('chain_id').notNullable()
  t.bigInteger('report_epoch').notNullable()
  t.integer('version').notNullable()
}

/**
 * Daily records: one "day" per final oracle report (keyed by chain id and report epoch) and the records
 * computed for it. Records are versioned: a run writes a new version and the day's `visible_version` flips
 * to it in one transaction, so readers see the previous version of a day or nothing, never half a day.
 * Also: the chain's clock (the head the follower last saw) that off-chain registrations are stamped with,
 * per-operator validators at each report, and the effective-dated fee schedules.
 */
export async function up(db: Knex): Promise<void> {
  await createChainClock(db)
  await stampRegistrations(db)
  await createReportOperators(db)
  await createFeeSchedules(db)
  await createDays(db)
  await createRecords(db)
  await createReconciliations(db)
  await createOperatorFeeRecords(db)
}

/** The head block the follower last saw, per chain: "now" on the chain (devnet time runs apart from ours). */
async function createChainClock(db: Knex): Promise<void> {
  await db.schema.createTable('chain_heads', (t) => {
    t.integer('chain_id').primary()
    t.bigInteger('block_number').notNullable()
    t.timestamp('time', { useTz: true }).notNullable()
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
  })
}

/** Registrations count for the reports mined after them, on the chain's clock. */
async function stampRegistrations(db: Knex): Promise<void> {
  await db.schema.alterTable('wallets', (t) => {
    t.timestamp('attributed_from', { useTz: true })
    t.timestamp('off_platform_from', { useTz: true })
  })
  await db.raw('update wallets set attributed_from = created_at where attributed_from is null')
  await db.raw(
    'update wallets set off_platform_from = updated_at where on_platform = false and off_platform_from is null',
  )
  await db.schema.alterTable('discount_rates', (t) => {
    t.timestamp('effective_from', { useTz: true })
  })
  await db.raw('update discount_rates set effective_from = created_at where effective_from is null')
}

/** Funded validators of each operator at a report (read by the follower at the report block). */
async function createReportOperators(db: Knex): Promise<void> {
  await db.schema.createTable('report_operators', (t) => {
    t.integer('chain_id').notNullable()
    t.bigInteger('block_number').notNullable()
    t.integer('log_index').notNullable()
    t.integer('operator_index').notNullable()
    t.integer('funded').notNullable()
    t.primary(['chain_id', 'block_number', 'log_index', 'operator_index'])
  })
}

/** The effective-dated fee schedules, seeded with the default ones. */
async function createFeeSchedules(db: Knex): Promise<void> {
  await db.schema.createTable('fee_schedules', (t) => {
    t.text('id').primary()
    t.text('model').notNullable()
    t.timestamp('effective_from', { useTz: true }).notNullable()
    t.jsonb('shares').notNullable()
    t.text('note')
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
  })
  for (const s of feeScheduleSeed()) {
    await db('fee_schedules').insert({
      id: s.id,
      model: s.model,
      effective_from: s.effective_from,
      shares: JSON.stringify(s.shares),
      note: s.note ?? null,
    })
  }
}

/** The days and what each shard of a day's run wrote. */
async function createDays(db: Knex): Promise<void> {
  // One row per (chain, report): its status, the version readers see and the version being written.
  await db.schema.createTable('days', (t) => {
    t.integer('chain_id').notNullable()
    t.bigInteger('report_epoch').notNullable()
    t.date('date').notNullable()
    t.bigInteger('block_number').notNullable()
    t.integer('tx_index').notNullable()
    t.integer('log_index').notNullable()
    t.text('block_hash').notNullable()
    t.timestamp('block_time', { useTz: true }).notNullable()
    t.bigInteger('previous_epoch')
    // pending | computing | computed | failed
    t.text('status').notNullable()
    t.text('reason')
    t.integer('visible_version')
    t.integer('computing_version')
    t.integer('last_version').notNullable().defaultTo(0)
    t.integer('shards')
    t.integer('wallets')
    t.text('engine_version')
    // sha-256 of the visible version's wallet records (sorted); the next day records which one it used
    t.text('content_hash')
    t.text('based_on_hash')
    t.text('error')
    t.timestamp('requested_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.timestamp('started_at', { useTz: true })
    t.timestamp('computed_at', { useTz: true })
    t.integer('duration_ms')
    t.primary(['chain_id', 'report_epoch'])
    t.index(['chain_id', 'date'])
    t.index(['chain_id', 'block_number'])
  })

  // What each shard of a run wrote (its wallets, hash and fee summary), read by the run's finalization.
  await db.schema.createTable('day_shards', (t) => {
    dayKey(t)
    t.integer('shard').notNullable()
    t.integer('wallets').notNullable()
    t.text('content_hash').notNullable()
    t.jsonb('fee_summary').notNullable()
    t.integer('duration_ms').notNullable()
    t.primary(['chain_id', 'report_epoch', 'version', 'shard'])
  })
}

/** A day version's records: per wallet, per account, the protocol's, and the fee totals. */
async function createRecords(db: Knex): Promise<void> {
  await db.schema.createTable('wallet_records', (t) => {
    dayKey(t)
    t.text('address').notNullable()
    t.date('date').notNullable()
    t.uuid('account_id')
    t.text('org_id')
    t.text('originator_org_id')
    t.boolean('on_platform').notNullable()
    t.text('target_fee_rate')
    t.text('fee_model').notNullable()
    t.text('fee_schedule_id').notNullable()
    t.text('conversion_rate').notNullable()
    t.text('previous_conversion_rate').notNullable()
    t.text('gross_protocol_fee_rate').notNullable()
    t.text('discount_rate').notNullable()
    for (const rate of WALLET_RATE_COLUMNS) t.text(rate).notNullable()
    for (const field of WALLET_AMOUNT_COLUMNS) amount(t, field)
    t.text('engine_version').notNullable()
    t.primary(['chain_id', 'report_epoch', 'version', 'address'])
  })

  await db.schema.createTable('account_records', (t) => {
    dayKey(t)
    t.uuid('account_id').notNullable()
    t.date('date').notNullable()
    t.text('org_id')
    t.integer('wallets').notNullable()
    for (const field of WALLET_AMOUNT_COLUMNS) amount(t, field)
    t.text('engine_version').notNullable()
    t.primary(['chain_id', 'report_epoch', 'version', 'account_id'])
  })

  await db.schema.createTable('protocol_records', (t) => {
    dayKey(t)
    t.date('date').notNullable()
    t.timestamp('block_time', { useTz: true }).notNullable()
    t.bigInteger('block_number').notNullable()
    amount(t, 'total_protocol_mints_lseth')
    amount(t, 'total_protocol_burns_lseth')
    t.integer('total_protocol_active_keys_count').notNullable()
    amount(t, 'rewards_eth')
    t.text('gross_fee_rate').notNullable()
    amount(t, 'gross_fee_lseth')
    t.text('conversion_rate').notNullable()
    amount(t, 'total_lseth_supply')
    amount(t, 'total_underlying_eth')
    t.text('a_srr_7d')
    t.text('engine_version').notNullable()
    t.primary(['chain_id', 'report_epoch', 'version'])
  })

  // Platform (org owning the account) and originator (org that added the wallet) fee totals.
  await db.schema.createTable('fee_records', (t) => {
    dayKey(t)
    t.text('kind').notNullable() // 'platform' | 'originator' | 'all'
    t.text('org_id').notNullable() // '' for kind 'all'
    t.date('date').notNullable()
    t.text('fee_model').notNullable()
    t.integer('wallets').notNullable()
    for (const field of FEE_AMOUNT_COLUMNS) amount(t, field)
    for (const rate of FEE_RATE_COLUMNS) t.text(rate).notNullable()
    t.text('engine_version').notNullable()
    t.primary(['chain_id', 'report_epoch', 'version', 'kind', 'org_id'])
  })
}

/** Per run: the holders' records against the protocol's figures (engine/reconciliation.ts), in wei. */
async function createReconciliations(db: Knex): Promise<void> {
  await db.schema.createTable('day_reconciliations', (t) => {
    dayKey(t)
    t.integer('holders').notNullable()
    t.decimal('shares_residual', 78, 0).notNullable()
    t.decimal('gross_residual', 78, 0).notNullable()
    t.decimal('fees_residual', 78, 0).notNullable()
    t.decimal('rewards_residual', 78, 0).notNullable()
    t.primary(['chain_id', 'report_epoch', 'version'])
  })
}

/** Per operator and day version: its active validators and fees. */
async function createOperatorFeeRecords(db: Knex): Promise<void> {
  await db.schema.createTable('operator_fee_records', (t) => {
    dayKey(t)
    t.text('operator_id').notNullable()
    t.date('date').notNullable()
    amount(t, 'active_validators')
    amount(t, 'operator_fees_eth')
    t.text('operator_fees_rate').notNullable()
    t.text('engine_version').notNullable()
    t.primary(['chain_id', 'report_epoch', 'version', 'operator_id'])
  })
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
