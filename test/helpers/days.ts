import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { toContracts } from '../../chain/addresses.ts'
import { createChainClient } from '../../chain/client.ts'
import { createLogFetcher } from '../../chain/log-fetcher.ts'
import { setupFromDevnet } from '../../cli/chain-setup.ts'
import { createLogger } from '../../common/logger.ts'
import { type Db, type DbHandle, migrate, openDb } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import { type DevnetHandle, type StartDevnetOptions, startDevnet } from '../../devnet/index.ts'
import type { TestChain } from '../../devnet/testing.ts'
import { createFollower } from '../../jobs/follower/index.ts'
import { createJobs } from '../../jobs/index.ts'
import { createInlineRunner, type JobRunner } from '../../jobs/runner.ts'
import type { Backend } from './api.ts'
import { SHORT_HISTORY_UPGRADES } from './devnet.ts'
import { computeInline } from './records.ts'
import { migratedTestDatabase } from './services.ts'

const silent = createLogger({ level: 'silent' })

/** A fresh migrated database: a new Postgres database, or PGlite in memory. */
export async function freshDatabase(backend: Backend): Promise<DbHandle> {
  if (backend === 'postgres') return migratedTestDatabase()
  const dbh = await openDb({})
  await migrate(dbh.db)
  return dbh
}

/**
 * Ingests the chain into `db`, stores the devnet's consensus facts (one pass of the consensus job: the API's
 * exit queue reads them from the database) and computes every ingested report's day with the inline runner.
 */
export async function syncAndCompute(db: Db, devnet: DevnetHandle): Promise<void> {
  const jobs = createJobs({ db, logger: silent, chain: setupFromDevnet(devnet), confirmations: 0 })
  await jobs.follower.syncOnce()
  await jobs.consensus?.runOnce()
  const runner = createInlineRunner(jobs.processors, silent)
  jobs.useRunner(runner)
  await runner.start()
  try {
    for (let i = 0; i < 500; i++) {
      await runner.enqueue('days', {}, { jobId: `test-days-${Date.now()}-${i}` })
      await runner.idle(120_000)
      const failed = await runner.failed()
      if (failed.length > 0) throw new Error(`day jobs failed: ${JSON.stringify(failed).slice(0, 2000)}`)
      const days = await db('days').select('status', 'error')
      const bad = days.find((d) => d.status === 'failed')
      if (bad) throw new Error(`a day failed: ${bad.error}`)
      if (days.length > 0 && days.every((d) => d.status === 'computed')) {
        const chainId = (await db('days').first('chain_id')).chain_id as number
        if (!(await createRepos(db).days.next(chainId))) return
      }
    }
    throw new Error('days were not all computed')
  } finally {
    await runner.close()
  }
}

/**
 * One pass of the consensus job, as the scheduled job runs it: the devnet's latest consensus facts become the
 * stored snapshot the API's validator exit queue and projections read.
 */
export async function storeConsensusSnapshot(db: Db, devnet: DevnetHandle): Promise<void> {
  const jobs = createJobs({ db, logger: silent, chain: setupFromDevnet(devnet), confirmations: 0 })
  await jobs.consensus?.runOnce()
}

/** Only ingests the chain (no day computation): sets the chain clock that registrations are stamped with. */
export async function syncOnly(db: Db, devnet: DevnetHandle): Promise<void> {
  const jobs = createJobs({ db, logger: silent, chain: setupFromDevnet(devnet), confirmations: 0 })
  await jobs.follower.syncOnce()
}

export interface ComputedHistory {
  devnet: DevnetHandle
  /** The devnet's data directory (devnet.json, devnet-consensus.json). */
  dataDir: string
  /** One database per requested backend, with the same history computed in each. */
  databases: Map<Backend, DbHandle>
  close(): Promise<void>
}

/**
 * A devnet history with computed daily records in one database per backend:
 * `before` days are mined and ingested, `onboard` registers accounts and wallets in each database (they
 * count from the next report on), then `after` more days are mined, ingested and every day is computed.
 */
export async function computedHistory(options: {
  backends: Backend[]
  before: number
  after: number
  walletCount?: number
  startDate?: string
  simulator?: StartDevnetOptions['simulator']
  /**
   * Upgrade days of the versioned history (default 0.5.0 on day 1, 1.0.0 on day 2, 1.2.1 on day 3: a short
   * history still starts on 0.4.0 reports and crosses every version the chain ran)
   */
  upgrades?: StartDevnetOptions['upgrades']
  onboard?: (db: Db, backend: Backend, devnet: DevnetHandle) => Promise<void>
}): Promise<ComputedHistory> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-history-'))
  const devnet = await startDevnet({
    dataDir,
    days: options.before,
    walletCount: options.walletCount ?? 40,
    startDate: options.startDate ?? '2026-04-25',
    dayIntervalMs: 0,
    blockIntervalMs: 100,
    history: 'versioned',
    upgrades: options.upgrades ?? SHORT_HISTORY_UPGRADES,
    ...(options.simulator ? { simulator: options.simulator } : {}),
  })
  const databases = new Map<Backend, DbHandle>()
  const close = async () => {
    for (const dbh of databases.values()) await dbh.close().catch(() => undefined)
    await devnet.stop()
    await fs.rm(dataDir, { recursive: true, force: true })
  }
  try {
    for (const backend of options.backends) {
      const dbh = await freshDatabase(backend)
      databases.set(backend, dbh)
      await syncOnly(dbh.db, devnet)
      await options.onboard?.(dbh.db, backend, devnet)
    }
    if (options.after > 0) await devnet.simulator.runDays(options.after)
    for (const dbh of databases.values()) await syncAndCompute(dbh.db, devnet)
  } catch (err) {
    await close()
    throw err
  }
  return { devnet, dataDir, databases, close }
}

/** A database following a bare test chain (`startTestChain`), with the day jobs on an inline runner. */
export interface TestChainService {
  dbh: DbHandle
  db: Db
  runner: JobRunner
  /** One pass of the follower (its result says whether it rolled back). */
  sync(): Promise<unknown>
  /** Computes every pending day (at least one). */
  compute(): Promise<void>
  close(): Promise<void>
}

/** Starts a `TestChainService` over a fresh Postgres database. */
export async function testChainService(chain: TestChain): Promise<TestChainService> {
  const dbh = await migratedTestDatabase()
  const contracts = toContracts({ ...chain.deployment.contracts, startBlock: chain.deployment.deployBlock })
  const setup = {
    chainId: chain.anvil.chainId,
    rpcUrl: chain.anvil.rpcUrl,
    contracts,
    allowerPrivateKey: undefined,
  }
  const jobs = createJobs({ db: dbh.db, logger: silent, chain: setup, confirmations: 0 })
  const client = createChainClient({ rpcUrl: chain.anvil.rpcUrl, chainId: chain.anvil.chainId })
  const follower = createFollower({
    db: dbh.db,
    client,
    fetcher: createLogFetcher({ client, baseDelayMs: 20, maxDelayMs: 200 }),
    chainId: chain.anvil.chainId,
    contracts,
    confirmations: 0,
    logger: silent,
  })
  const runner = createInlineRunner(jobs.processors, silent)
  jobs.useRunner(runner)
  await runner.start()
  return {
    dbh,
    db: dbh.db,
    runner,
    sync: () => follower.syncOnce(),
    compute: () => computeInline(dbh.db, runner, 1),
    close: async () => {
      await runner.close()
      await dbh.close()
    },
  }
}
