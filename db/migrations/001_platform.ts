import type { Knex } from 'knex'

/** Orgs, API clients, accounts, wallets, their status audit, discount rates, Solana allowlist. */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('orgs', (t) => {
    t.text('id').primary()
    t.text('name').notNullable()
    t.boolean('can_allowlist').notNullable().defaultTo(true)
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
  })

  await db.schema.createTable('api_clients', (t) => {
    t.text('id').primary()
    t.text('org_id').notNullable().references('orgs.id')
    t.text('name').notNullable()
    t.text('scopes').notNullable()
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.timestamp('revoked_at', { useTz: true })
  })

  await db.schema.createTable('api_client_secrets', (t) => {
    t.uuid('id').primary()
    t.text('client_id').notNullable().references('api_clients.id')
    t.text('secret_hash').notNullable()
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.timestamp('revoked_at', { useTz: true })
    t.index(['client_id'])
  })

  await db.schema.createTable('accounts', (t) => {
    t.uuid('id').primary()
    t.text('org_id').notNullable().references('orgs.id')
    t.text('key').notNullable()
    t.text('status').notNullable()
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.unique(['org_id', 'key'])
    t.index(['org_id', 'created_at'])
  })

  await db.schema.createTable('wallets', (t) => {
    t.uuid('id').primary()
    t.uuid('account_id').notNullable().references('accounts.id')
    t.text('org_id').notNullable().references('orgs.id')
    t.text('originator_org_id').notNullable().references('orgs.id')
    // lower-case 0x address; unique across orgs: fees are attributed once
    t.text('address').notNullable().unique()
    t.text('type').notNullable()
    t.text('status').notNullable()
    // what the platform asked for: the wallet should hold DEPOSIT|REDEEM on the Allowlist
    t.boolean('wants_allowlist').notNullable()
    // what the chain says (set by the follower)
    t.boolean('allowlisted').notNullable().defaultTo(false)
    t.decimal('chain_permissions', 78, 0).notNullable().defaultTo('0')
    t.boolean('on_platform').notNullable()
    // who paused it: 'wallet' (its own pause) or 'account' (the account's pause)
    t.text('paused_by')
    t.text('status_reason')
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.index(['org_id', 'created_at', 'id'])
    t.index(['account_id'])
  })

  await db.schema.createTable('status_changes', (t) => {
    t.bigIncrements('id').primary()
    t.text('entity').notNullable() // 'account' | 'wallet'
    t.uuid('entity_id').notNullable()
    t.text('from_status')
    t.text('to_status').notNullable()
    t.text('actor').notNullable() // client id, 'operator', 'chain'
    t.text('reason')
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.index(['entity', 'entity_id'])
  })

  // Pending on-chain permission changes; the allowlist writer reads and settles them.
  await db.schema.createTable('allowlist_changes', (t) => {
    t.bigIncrements('id').primary()
    t.uuid('wallet_id').notNullable().references('wallets.id')
    t.text('address').notNullable()
    t.decimal('permissions', 78, 0).notNullable()
    t.text('reason').notNullable()
    // pending -> submitted -> confirmed | failed ; superseded when a newer change for the address arrives
    t.text('state').notNullable().defaultTo('pending')
    t.integer('attempts').notNullable().defaultTo(0)
    t.text('tx_hash')
    t.text('error')
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.index(['state', 'id'])
    t.index(['address'])
  })

  await db.schema.createTable('discount_rates', (t) => {
    t.bigIncrements('id').primary()
    t.uuid('account_id').notNullable().references('accounts.id')
    t.decimal('target_fee_rate', 40, 18).notNullable()
    t.text('created_by').notNullable()
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.index(['account_id', 'created_at'])
  })

  await db.schema.createTable('sol_allowlist', (t) => {
    t.text('address').primary()
    t.boolean('staking').notNullable()
    t.boolean('redemption').notNullable()
    t.text('org_id').notNullable().references('orgs.id')
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
  })
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
