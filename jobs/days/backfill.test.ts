import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type DbHandle, migrate, openDb } from '../../db/index.ts'
import { createRepos, type Repos } from '../../db/repos/index.ts'
import { finishTestRun, ingestTestReports, setRiverCursor } from '../../test/helpers/day-rows.ts'
import type { JobInfo } from '../runner.ts'
import { backfillProgress, boundedScheduler, parseDate, startBackfill, validateRange } from './backfill.ts'

const CHAIN = 7
const DATES = ['2026-04-01', '2026-04-02', '2026-04-03', '2026-04-04', '2026-04-05']
const epochOf = (i: number) => String(1000 + i)

describe('startBackfill and backfillProgress', () => {
  let dbh: DbHandle
  let repos: Repos

  /** Runs day `i` to the end as the pipeline would: computed on its predecessor's content. */
  async function compute(i: number) {
    const version = await repos.days.startRun(CHAIN, epochOf(i), 1)
    await finishTestRun(repos, CHAIN, epochOf(i), i, version)
  }
  async function fail(i: number) {
    const version = await repos.days.startRun(CHAIN, epochOf(i), 1)
    await repos.days.failRun(CHAIN, epochOf(i), version, `report epoch ${epochOf(i)}: supply went negative`)
  }
  const statuses = async () => (await repos.days.list(CHAIN)).map((d) => d.status)

  beforeAll(async () => {
    dbh = await openDb({})
    await migrate(dbh.db)
    repos = createRepos(dbh.db)
  })
  afterAll(async () => {
    await dbh?.close()
  })

  test('behavior: dates must be real YYYY-MM-DD dates and from must not be after to', () => {
    expect(parseDate('2026-02-28', '--from')).toBe('2026-02-28')
    expect(() => parseDate('2026-02-30', '--from')).toThrow(
      '--from must be a date YYYY-MM-DD from 1970-01-01 (got "2026-02-30")',
    )
    expect(() => parseDate('2026-4-1', '--to')).toThrow('--to must be a date YYYY-MM-DD')
    expect(() => validateRange({ from: '2026-04-02', to: '2026-04-01' })).toThrow(
      '--from 2026-04-02 is after --to 2026-04-01',
    )
  })

  test('behavior: nothing ingested, a range past the ingested reports, or without a report fails clearly', async () => {
    const range = { from: DATES[0]!, to: DATES[1]!, recompute: false }
    await expect(startBackfill(dbh.db, CHAIN, range)).rejects.toThrow(/run `lsreport sync` first/)
    // reports the follower has not confirmed (past the River cursor) do not count
    await ingestTestReports(repos, CHAIN, DATES, epochOf, 103n)
    await expect(startBackfill(dbh.db, CHAIN, { ...range, to: DATES[4]! })).rejects.toThrow(
      '--to 2026-04-05 is after the latest ingested report: reports are ingested up to 2026-04-04; run `lsreport sync`',
    )
    await expect(
      startBackfill(dbh.db, CHAIN, { from: '2026-03-01', to: '2026-03-31', recompute: false }),
    ).rejects.toThrow(
      'no oracle report between 2026-03-01 and 2026-03-31 (reports are ingested from 2026-04-01 to 2026-04-04)',
    )
  })

  test('behavior: progress counts computed and current days; a rerun retries failed days and changes nothing else', async () => {
    await setRiverCursor(repos, CHAIN, 200n)
    const range = { from: DATES[1]!, to: DATES[3]! }
    const start = await startBackfill(dbh.db, CHAIN, { ...range, recompute: false })
    expect(start).toMatchObject({
      days: 3,
      retried: 0,
      recomputed: 0,
      ingested: { from: DATES[0], to: DATES[4] },
    })
    expect(await statuses()).toEqual(['pending', 'pending', 'pending', 'pending', 'pending'])
    expect(await backfillProgress(dbh.db, CHAIN, range)).toEqual({
      total: 3,
      computed: 0,
      pending: 3,
      computing: 0,
      failed: [],
    })

    await compute(0)
    await compute(1)
    await fail(2)
    const failed = await backfillProgress(dbh.db, CHAIN, range)
    expect(failed).toMatchObject({ total: 3, computed: 1, pending: 1, computing: 0 })
    expect(failed.failed).toEqual([
      { date: DATES[2], report_epoch: epochOf(2), error: 'report epoch 1002: supply went negative' },
    ])

    const rerun = await startBackfill(dbh.db, CHAIN, { ...range, recompute: false })
    expect(rerun).toMatchObject({ retried: 1, recomputed: 0 })
    expect(await statuses()).toEqual(['computed', 'computed', 'pending', 'pending', 'pending'])
    await compute(2)
    await compute(3)
    expect(await backfillProgress(dbh.db, CHAIN, range)).toMatchObject({ total: 3, computed: 3, failed: [] })

    const before = await repos.days.list(CHAIN)
    expect(await startBackfill(dbh.db, CHAIN, { ...range, recompute: false })).toMatchObject({
      retried: 0,
      recomputed: 0,
    })
    expect(await repos.days.list(CHAIN)).toEqual(before)
  })

  test('behavior: --recompute sends the range back to pending; a day computed on a stale predecessor is not done', async () => {
    const range = { from: DATES[1]!, to: DATES[3]! }
    expect(await startBackfill(dbh.db, CHAIN, { ...range, recompute: true })).toMatchObject({ recomputed: 3 })
    expect(await statuses()).toEqual(['computed', 'pending', 'pending', 'pending', 'pending'])
    expect(await backfillProgress(dbh.db, CHAIN, range)).toMatchObject({ computed: 0, pending: 3 })
    await compute(1)
    expect(await backfillProgress(dbh.db, CHAIN, range)).toMatchObject({ computed: 1, pending: 2 })
  })

  test('behavior: a failed day before the range blocks it and is reported; a rerun retries it', async () => {
    const range = { from: DATES[2]!, to: DATES[3]! }
    await repos.days.requestRecompute(CHAIN, { from: DATES[0]!, to: DATES[4]! })
    await fail(0)
    const progress = await backfillProgress(dbh.db, CHAIN, range)
    expect(progress.failed).toEqual([])
    expect(progress.blockedBy).toMatchObject({ date: DATES[0], report_epoch: epochOf(0) })
    expect(await startBackfill(dbh.db, CHAIN, { ...range, recompute: false })).toMatchObject({ retried: 1 })
    expect((await backfillProgress(dbh.db, CHAIN, range)).blockedBy).toBeUndefined()
  })

  test('behavior: the bounded scheduler starts no day after the range', async () => {
    const calls: string[] = []
    const inner = async (job: JobInfo) => {
      calls.push(job.id)
      return {}
    }
    const job = (id: string): JobInfo => ({ id, name: 'days', data: {}, attemptsMade: 0, attempts: 1 })
    for (const i of [0, 1, 2, 3]) await compute(i)
    // the next day to compute is 2026-04-05
    expect(await boundedScheduler(inner, dbh.db, CHAIN, DATES[3]!)(job('a'))).toMatchObject({
      waiting: expect.stringContaining('2026-04-05'),
    })
    await boundedScheduler(inner, dbh.db, CHAIN, DATES[4]!)(job('b'))
    expect(calls).toEqual(['b'])
  })
})
