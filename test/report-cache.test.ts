import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createReportReads } from '../api/report-cache.ts'
import type { DbHandle } from '../db/index.ts'
import { createRepos, type Repos } from '../db/repos/index.ts'
import type { ReportDay } from '../db/repos/reports.ts'
import { publishNewVersion } from './helpers/records.ts'
import { seedRewardsDay } from './helpers/rewards-day.ts'
import { IN_CI, migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
if (IN_CI && !pgOk) throw new Error('Postgres is required in CI')

describe.runIf(pgOk)('createReportReads (reporting reads from memory)', () => {
  let dbh: DbHandle
  let repos: Repos
  let addresses: string[]
  let date: string

  beforeAll(async () => {
    dbh = await migratedTestDatabase()
    const seeded = await seedRewardsDay(dbh.db, { holders: 300, sample: 20 })
    addresses = seeded.addresses
    date = seeded.date
    repos = createRepos(dbh.db)
  }, 120_000)
  afterAll(async () => {
    await dbh?.close()
  })

  test('behavior: a computed day is served from memory until its version changes, then the new version', async () => {
    let now = 0
    let queries = 0
    const count = () => {
      queries += 1
    }
    dbh.db.on('query', count)
    const reads = createReportReads(repos, { ttlMs: 1000, now: () => now })
    const [a, b, c] = addresses as [string, string, string]

    const day = (await reads.day(date)) as ReportDay
    expect(day.status).toBe('computed')
    const first = await reads.walletRows([day], [a, b])
    expect(first.rows.map((r) => r.address)).toEqual([a, b])
    expect((await reads.walletRows([day], [b, a])).rows.map((r) => r.address)).toEqual([b, a])
    const stored = await dbh
      .db('wallet_records')
      .where({ report_epoch: day.report_epoch, address: a })
      .first()
    expect(first.rows.find((r) => r.address === a)?.rewards_eth).toBe(stored.rewards_eth)

    // held: no query for the day nor for records already read
    queries = 0
    expect(await reads.day(date)).toBe(day)
    const again = await reads.walletRows([day], [a])
    expect(again.rows[0]).toBe(first.rows.find((r) => r.address === a))
    expect(queries).toBe(0)

    await publishNewVersion(dbh, day, a, '123')
    // within the lifetime the old version is still served whole (its day and its records)
    now = 999
    const held = (await reads.day(date)) as ReportDay
    expect(held.visible_version).toBe(day.visible_version)
    expect((await reads.walletRows([held], [a])).rows[0]?.rewards_eth).toBe(stored.rewards_eth)
    // a record not held yet: its version is gone, so the days are read again and the new version answers
    const fresh = await reads.walletRows([held], [c])
    expect(fresh.days[0]?.visible_version).toBe(day.visible_version + 1)
    expect(fresh.rows.map((r) => r.address)).toEqual([c])

    // after the lifetime: the new version, and nothing of the old one
    now = 2000
    const next = (await reads.day(date)) as ReportDay
    expect(next.visible_version).toBe(day.visible_version + 1)
    const after = await reads.walletRows([next], [a, b])
    expect(after.rows.find((r) => r.address === a)?.rewards_eth).toBe('123')
    expect(after.rows.find((r) => r.address === b)?.rewards_eth).not.toBeUndefined()
    dbh.db.off('query', count)
  })

  test('behavior: a date without a report re-reads the days before answering none', async () => {
    const reads = createReportReads(repos, { ttlMs: 60_000 })
    expect(await reads.day('2000-01-01')).toBeUndefined()
    const bounds = await reads.bounds()
    expect(bounds?.latest.date).toBe(date)
    // results of a day being recomputed are never held
    const day = (await reads.day(date)) as ReportDay
    let loads = 0
    const computing = { ...day, status: 'computing' as const }
    for (let i = 0; i < 2; i++) {
      await reads.cached([computing], 'k', async () => {
        loads += 1
        return 'v'
      })
    }
    expect(loads).toBe(2)
    for (let i = 0; i < 2; i++) {
      await reads.cached([day], 'k', async () => {
        loads += 1
        return 'v'
      })
    }
    expect(loads).toBe(3)
  })
})
