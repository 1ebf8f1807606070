import type { Knex } from 'knex'
import { migrationSource } from './migrations/index.ts'

/** Applies every pending migration (append-only list in db/migrations). Returns the names applied. */
export async function migrate(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]]
  return applied
}

/** True when every known migration has been applied. */
export async function migrationsUpToDate(db: Knex): Promise<boolean> {
  const [, pending] = (await db.migrate.list({ migrationSource })) as [unknown[], unknown[]]
  return pending.length === 0
}
