import type { Knex } from 'knex'

/**
 * The token signing keys every API process shares (api/auth/signing-keys.ts): ES256 key pairs, the private part
 * sealed with AES-256-GCM under SIGNING_KEY_SECRET (api/auth/sealed-key.ts), never stored in the clear. The
 * newest row (highest `seq`) signs; an older one verifies until the tokens it signed have expired (its
 * successor's `created_at` plus the token lifetime), then is retired: kept as a record, never trusted again.
 * `source`: made by the service, or imported from JWT_PRIVATE_KEY or an earlier version's key file.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('signing_keys', (t) => {
    t.bigIncrements('seq').primary()
    t.text('kid').notNullable().unique()
    t.jsonb('public_jwk').notNullable()
    t.text('sealed_private_key').notNullable()
    t.text('source').notNullable()
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(db.fn.now())
  })
  await db.raw(
    `alter table signing_keys add constraint signing_keys_source_check
       check (source in ('generated', 'jwt_private_key', 'key_file'))`,
  )
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
