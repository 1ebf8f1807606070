import type { Knex } from 'knex'

/**
 * Impersonation as a delegation (docs/decisions.md "Authentication and scopes"): an organization names the organizations
 * that may read as it (`org_delegations`, changed by operator commands, each change in `delegation_changes`); an
 * operator organization (`orgs.operator`, set at creation) may read as any. Every impersonated request leaves
 * one row in `impersonations` with both org ids. Audit rows carry no foreign keys: they outlive what they name.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('orgs', (t) => {
    t.boolean('operator').notNullable().defaultTo(false)
  })

  await db.schema.createTable('org_delegations', (t) => {
    // org_id (the delegating organization) lets delegate_org_id read as it
    t.text('org_id').notNullable().references('orgs.id')
    t.text('delegate_org_id').notNullable().references('orgs.id')
    t.text('created_by').notNullable()
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.primary(['org_id', 'delegate_org_id'])
  })
  await db.raw(
    'alter table org_delegations add constraint org_delegations_not_self check (org_id <> delegate_org_id)',
  )

  await db.schema.createTable('delegation_changes', (t) => {
    t.bigIncrements('id').primary()
    t.text('org_id').notNullable()
    t.text('delegate_org_id').notNullable()
    t.text('action').notNullable() // 'delegate' | 'undelegate'
    t.text('actor').notNullable() // 'operator' (CLI)
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.index(['org_id', 'id'])
  })
  await db.raw(
    `alter table delegation_changes add constraint delegation_changes_action_check
       check (action in ('delegate', 'undelegate'))`,
  )

  await db.schema.createTable('impersonations', (t) => {
    t.bigIncrements('id').primary()
    t.text('org_id').notNullable() // the caller's organization (the token's)
    t.text('client_id').notNullable()
    t.text('target_org_id').notNullable() // the organization read as
    t.text('method').notNullable()
    t.text('route').notNullable()
    t.text('request_id').notNullable()
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now())
    t.index(['target_org_id', 'created_at'])
  })
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
