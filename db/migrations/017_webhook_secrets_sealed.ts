import type { Knex } from 'knex'
import { ConfigError } from '../../common/errors.ts'
import type { MigrationOptions } from '../migrate.ts'
import { sealWebhookSecret } from '../webhook-secrets.ts'

/**
 * Webhook signing secrets sealed at rest: every `webhooks.secret` still in the clear (`whsec_...`, as 005 stored
 * them) is sealed under SIGNING_KEY_SECRET, bound to its subscription (db/webhook-secrets.ts), like the token
 * signing keys (015). Its deliveries are signed with the same secret as before: receivers change nothing. A
 * database with no plain secret needs no key; one with some needs `options.sealingKey` (the commands that
 * migrate pass SIGNING_KEY_SECRET, or the embedded database's own), else the migration stops, saying so.
 */
export async function up(db: Knex, options: MigrationOptions = {}): Promise<void> {
  const plain: { id: string; secret: string }[] = await db('webhooks')
    .where('secret', 'like', 'whsec\\_%')
    .select('id', 'secret')
  if (plain.length === 0) return
  if (!options.sealingKey) {
    throw new ConfigError(
      `migration 017_webhook_secrets_sealed seals ${plain.length} webhook signing secret(s) stored in the clear ` +
        'and needs SIGNING_KEY_SECRET: run `lsreport migrate` with it set',
    )
  }
  const key = await options.sealingKey()
  for (const row of plain) {
    await db('webhooks')
      .where({ id: row.id, secret: row.secret })
      .update({ secret: sealWebhookSecret(key, row.id, row.secret) })
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
