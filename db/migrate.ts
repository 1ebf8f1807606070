import type { Knex } from 'knex'
import { migrationSource } from './migrations/index.ts'

/** What a migration may need beyond the database. */
export interface MigrationOptions {
  /**
   * The key secrets are sealed under (SIGNING_KEY_SECRET, or the embedded database's own), read only by a
   * migration that has something to seal (017: webhook secrets stored in the clear).
   */
  sealingKey?: () => Promise<Buffer>
}

/**
 * Applies every pending migration (append-only list in db/migrations), each given `options`. Returns the names
 * applied.
 *
 * @example
 * await migrate(db, { sealingKey: () => signingKeySecret(config) })
 */
export async function migrate(db: Knex, options: MigrationOptions = {}): Promise<string[]> {
  const source: typeof migrationSource = {
    ...migrationSource,
    getMigration: async ([, migration]) => ({
      up: (knex: Knex) => migration.up(knex, options),
      down: (knex: Knex) => migration.down(knex),
    }),
  }
  const [, applied] = (await db.migrate.latest({ migrationSource: source })) as [number, string[]]
  return applied
}

/** True when every known migration has been applied. */
export async function migrationsUpToDate(db: Knex): Promise<boolean> {
  const [, pending] = (await db.migrate.list({ migrationSource })) as [unknown[], unknown[]]
  return pending.length === 0
}
