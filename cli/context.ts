import path from 'node:path'
import { signingKeySecret } from '../api/auth/key-secret.ts'
import { type Config, loadConfig } from '../common/config.ts'
import { createLogger, type Logger } from '../common/logger.ts'
import { memoizeSuccess } from '../common/memo.ts'
import { createShutdown, type Shutdown } from '../common/shutdown.ts'
import { type DbHandle, type MigrationOptions, migrate, openDb } from '../db/index.ts'
import { lockDataDir } from '../db/lock.ts'

/** What every command starts from: config, logger, shutdown registry, database. */
/** Runs a short command against the database, then closes it (cli/main.ts `withContext`). */
export type WithContext = <T>(fn: (ctx: Context) => Promise<T>) => Promise<T>

export interface Context {
  config: Config
  logger: Logger
  shutdown: Shutdown
  dbh: DbHandle
}

/**
 * Loads config, opens the database (Postgres or PGlite under DATA_DIR, locked for this process) and
 * applies pending migrations when asked.
 */
export async function createContext(
  env: NodeJS.ProcessEnv,
  options: {
    migrate: boolean
    logTo?: 'stdout' | 'stderr'
    quiet?: boolean
    /** this command's bound on a silent Postgres query (DB_STALL_MS overrides it; see DbOptions.stallMs) */
    stallMs?: number
  },
): Promise<Context> {
  const config = loadConfig(env)
  const level = options.quiet && !env.LOG_LEVEL ? 'warn' : config.logLevel
  const logger = createLogger({ level, destination: options.logTo === 'stdout' ? 1 : 2 })
  const shutdown = createShutdown(logger)
  const pgliteDir = config.databaseUrl ? undefined : path.join(config.dataDir, 'pg')
  const release = pgliteDir ? lockDataDir(pgliteDir) : undefined
  const stallMs = config.dbStallMs ?? options.stallMs
  let dbh: DbHandle
  try {
    dbh = await openDb({ databaseUrl: config.databaseUrl, pgliteDir, ...(stallMs ? { stallMs } : {}) })
  } catch (err) {
    // e.g. no PGlite in a production install: the data directory is not left locked
    release?.()
    throw err
  }
  shutdown.add('database', async () => {
    await dbh.close()
    release?.()
  })
  if (options.migrate) {
    const applied = await migrate(dbh.db, migrationOptions(config))
    if (applied.length > 0) logger.info({ migrations: applied, backend: dbh.backend }, 'migrations applied')
  }
  return { config, logger, shutdown, dbh }
}

/**
 * What every command that migrates gives the migrations: the sealing key (SIGNING_KEY_SECRET, or the embedded
 * database's own), read only when a migration has secrets to seal (017).
 *
 * @example
 * await migrate(ctx.dbh.db, migrationOptions(ctx.config))
 */
export function migrationOptions(config: Config): MigrationOptions {
  return { sealingKey: memoizeSuccess(() => signingKeySecret(config)) }
}
