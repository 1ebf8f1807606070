import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createLogger } from '../../common/logger.ts'
import type { DbHandle } from '../../db/index.ts'
import { createRepos, inTransaction, type Repos } from '../../db/repos/index.ts'
import { finishTestRun, ingestTestReports } from '../../test/helpers/day-rows.ts'
import { migratedTestDatabase, postgresAvailable } from '../../test/helpers/services.ts'
import type { Flow } from '../runner.ts'
import { ABANDONED_RUN_MS, dayJobId, scheduleDays } from './scheduler.ts'

const pgOk = await postgresAvailable()
const CHAIN = 9
const DATES = ['2026-04-01', '2026-04-02', '2026-04-03']
const epochOf = (i: number) => String(2000 + i)
const silent = createLogger({ level: 'silent' })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The scheduler takes a computing day whose job is gone from the queue for abandoned and starts it again. A
 * run's finalization commits its day, then its job completes: a pass that read the day as computing before
 * that commit and asked for its job after the job completed restarted a day that had just been computed,
 * and published it twice (61 protocol records for 60 days, once, with two BullMQ workers). These tests
 * force that interleaving on Postgres (two connections).
 */
describe.runIf(pgOk)('scheduleDays and a run finishing under it (Postgres)', () => {
  let dbh: DbHandle & { url: string }
  let repos: Repos

  /** Publishes `version` of day `i` as its finalization does: its day locked, in a transaction of its own. */
  function finish(i: number, version: number): Promise<'computed' | 'superseded'> {
    return inTransaction(dbh.db, async (r) => {
      const day = await r.days.lock(CHAIN, epochOf(i))
      if (day?.computing_version !== version) return 'superseded'
      await finishTestRun(r, CHAIN, epochOf(i), i, version)
      return 'computed'
    })
  }

  /** Starts a run of day `i` as old as an abandoned one. */
  async function staleRun(i: number): Promise<number> {
    const version = await repos.days.startRun(CHAIN, epochOf(i), 1)
    await dbh
      .db('days')
      .where({ chain_id: CHAIN, report_epoch: epochOf(i) })
      .update({ started_at: dbh.db.raw(`now() - interval '${2 * ABANDONED_RUN_MS} milliseconds'`) })
    return version
  }

  /** One scheduling pass with `inFlight` as the queue's answer; returns its result and the flows it added. */
  async function schedule(inFlight: (jobId: string) => Promise<boolean>) {
    const flows: Flow[] = []
    const result = await scheduleDays({
      db: dbh.db,
      chainId: CHAIN,
      logger: silent,
      enqueueFlow: async (flow) => {
        flows.push(flow)
      },
      inFlight,
    })
    return { result, flows }
  }

  /** Sessions of this database waiting for a lock. */
  async function lockWaits(): Promise<number> {
    const [row] = (
      await dbh.db.raw(
        `select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'`,
      )
    ).rows
    return row.n
  }

  beforeAll(async () => {
    dbh = await migratedTestDatabase()
    repos = createRepos(dbh.db)
    await ingestTestReports(repos, CHAIN, DATES, epochOf, 200n)
    await repos.days.syncWithReports(CHAIN, 200n)
    await finish(0, await repos.days.startRun(CHAIN, epochOf(0), 1))
  })
  afterAll(async () => {
    await dbh?.close()
  })

  test('behavior: a run whose finalization commits while the scheduler looks for its job is not started again', async () => {
    const version = await staleRun(1)
    let finishing: Promise<string> | undefined
    // the run's finalization runs now: once it has committed, its job completes and leaves the queue; while
    // it waits for a lock, its job is still running
    const { result, flows } = await schedule(async (id) => {
      expect(id).toBe(dayJobId(CHAIN, epochOf(1), version))
      let settled = false
      finishing = finish(1, version).finally(() => {
        settled = true
      })
      for (;;) {
        if (settled) return false
        if ((await lockWaits()) > 0) return true
        await sleep(10)
      }
    })
    expect(await finishing).toBe('computed')
    expect(result).toMatchObject({ waiting: `report epoch ${epochOf(1)} is being computed` })
    expect(flows).toEqual([])
    expect(await repos.days.get(CHAIN, epochOf(1))).toMatchObject({
      status: 'computed',
      visible_version: version,
      computing_version: null,
      last_version: version,
    })
    const published = await dbh.db('report_versions').where({ chain_id: CHAIN, report_epoch: epochOf(1) })
    expect(published).toHaveLength(1)
  })

  test('behavior: a run whose job is gone and that does not finish is started again as a new version', async () => {
    const version = await staleRun(2)
    const { result, flows } = await schedule(async () => false)
    expect(result.started).toMatchObject({ epoch: epochOf(2), version: version + 1, shards: 1 })
    expect(flows.map((f) => f.jobId)).toEqual([dayJobId(CHAIN, epochOf(2), version + 1)])
    expect(await finish(2, version)).toBe('superseded')
    expect(await repos.days.get(CHAIN, epochOf(2))).toMatchObject({
      status: 'computing',
      computing_version: version + 1,
    })
  })
})
