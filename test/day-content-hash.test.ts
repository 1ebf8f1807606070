import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Db, type DbHandle, migrate, openDb } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { CONTENT_HASH_SCHEME, contentHashOfLines } from '../jobs/days/content-hash.ts'
import { createBullRunner } from '../jobs/runner.ts'
import { computeInline } from './helpers/records.ts'
import { syntheticDayRunner } from './helpers/rewards-day.ts'
import { migratedTestDatabase, postgresAvailable, REDIS_URL, redisAvailable } from './helpers/services.ts'
import { BENCH_CHAIN_ID, writeHistory } from './helpers/synthetic-history.ts'

const servicesOk = (await postgresAvailable()) && (await redisAvailable())
const REPORTS = 3
/** ~51 wallets a day: 1,000 wallets a shard gives 1 shard, 30 gives 2, 2 gives 32. */
const HOLDERS = 50
const SHARDS_OF = { 1: 1_000, 2: 30, 32: 2 } as const

/**
 * Computes every pending day with `shards` shards a day, on the inline runner or on BullMQ; `ran` days (all
 * by default) then have runs of that many shards.
 */
async function compute(
  db: Db,
  shards: keyof typeof SHARDS_OF,
  on: 'inline' | 'bullmq',
  ran = REPORTS,
): Promise<void> {
  const runner = syntheticDayRunner(db, {
    shardWallets: SHARDS_OF[shards],
    ...(on === 'bullmq'
      ? {
          makeRunner: (processors, logger) =>
            createBullRunner(processors, {
              redisUrl: REDIS_URL,
              prefix: `t-dch-${randomBytes(4).toString('hex')}`,
              logger,
            }),
        }
      : {}),
  })
  await runner.start()
  try {
    await computeInline(db, runner, REPORTS)
  } finally {
    await runner.close()
  }
  const runs: number[] = await db('days').pluck('shards')
  expect(runs.filter((n) => n === shards)).toHaveLength(ran)
}

/** Every day recomputed (an operator's recompute of the whole range). */
async function recomputeAll(db: Db, shards: keyof typeof SHARDS_OF, on: 'inline' | 'bullmq') {
  const dates = (await db('days').orderBy('date').select(db.raw("to_char(date, 'YYYY-MM-DD') as d"))).map(
    (r: { d: string }) => r.d,
  )
  const sent = await createRepos(db).days.requestRecompute(BENCH_CHAIN_ID, {
    from: dates[0] as string,
    to: dates.at(-1) as string,
  })
  expect(sent).toBe(REPORTS)
  await compute(db, shards, on)
}

/** What a day publishes: its visible version and hash, the restatement log, the day.finalized events. */
async function published(db: Db) {
  const count = async (q: ReturnType<Db>) => {
    const [row] = (await q.count({ n: '*' })) as { n: string }[]
    return Number(row?.n)
  }
  return {
    days: await db('days')
      .orderBy('block_number')
      .select('report_epoch', 'visible_version', 'content_hash', 'content_hash_scheme', 'based_on_hash'),
    versions: await count(db('report_versions')),
    events: await count(db('webhook_events').where({ type: 'day.finalized' })),
    // the records of unpublished runs are gone: one version of wallet records a day
    recordVersions: await count(db.from(db('wallet_records').distinct('report_epoch', 'version').as('v'))),
  }
}

/** The content hash of each day's visible records, read back from the table: a function of the records. */
async function hashesOfStoredRecords(db: Db): Promise<string[]> {
  const repos = createRepos(db)
  const days = await repos.days.list(BENCH_CHAIN_ID)
  const hashes: string[] = []
  for (const day of days) {
    const out = await repos.records.openContentLines({
      chainId: BENCH_CHAIN_ID,
      epoch: String(day.report_epoch),
      version: day.visible_version as number,
    })
    try {
      hashes.push(await contentHashOfLines(out.texts))
    } finally {
      await out.close()
    }
  }
  return hashes
}

/**
 * Issue 36, item 2: a day's content hash is a function of its records only, whatever the shard layout, runner
 * or backend, and a recompute of unchanged records publishes nothing (no version, no day.finalized), also
 * against a version hashed by the layout-bound scheme before migration 019.
 */
describe.runIf(servicesOk)(
  'a day content hash is a function of its records (Postgres, PGlite, BullMQ)',
  () => {
    let postgres: DbHandle
    let pglite: DbHandle

    beforeAll(async () => {
      postgres = await migratedTestDatabase()
      pglite = await openDb({})
      await migrate(pglite.db)
      for (const { db } of [postgres, pglite]) {
        await writeHistory(db, { holders: HOLDERS, reports: REPORTS, registered: 0.2, senders: 0.2 })
      }
    }, 120_000)

    afterAll(async () => {
      await postgres?.close()
      await pglite?.close()
    })

    test('behavior: 1, 2 and 32 shards, inline and on BullMQ, Postgres and PGlite give one hash; recomputes publish nothing', async () => {
      await compute(postgres.db, 1, 'inline')
      const first = await published(postgres.db)
      expect(first.days.map((d) => d.visible_version)).toEqual([1, 1, 1])
      expect(first.days.every((d) => d.content_hash_scheme === CONTENT_HASH_SCHEME)).toBe(true)
      expect(first).toMatchObject({ versions: REPORTS, events: REPORTS, recordVersions: REPORTS })
      expect(await hashesOfStoredRecords(postgres.db)).toEqual(first.days.map((d) => d.content_hash))

      // the same days on PGlite, 2 shards (a job each there)
      await compute(pglite.db, 2, 'inline')
      expect(await published(pglite.db)).toEqual(first)
      expect(await hashesOfStoredRecords(pglite.db)).toEqual(first.days.map((d) => d.content_hash))

      // recomputes under other shard sizes and runners: the same hash, no version, no event, nothing restated
      await recomputeAll(postgres.db, 32, 'bullmq')
      expect(await published(postgres.db)).toEqual(first)
      await recomputeAll(postgres.db, 2, 'inline')
      expect(await published(postgres.db)).toEqual(first)
      await recomputeAll(pglite.db, 32, 'inline')
      expect(await published(pglite.db)).toEqual(first)
      await recomputeAll(pglite.db, 1, 'inline')
      expect(await published(pglite.db)).toEqual(first)
      // each day did run again (a version number spent per run), and was kept as it was
      const runs: number[] = await postgres.db('days').orderBy('block_number').pluck('last_version')
      expect(runs).toEqual([3, 3, 3])
    }, 180_000)

    test('behavior: a version hashed before migration 019 (by its shard layout) is compared by its records: unchanged ones publish nothing', async () => {
      const { db } = postgres
      const before = await published(db)
      const [, second, third] = before.days
      // as an upgraded database holds it: the old scheme's hash, no scheme, the next day based on that hash
      const legacy = `${'0'.repeat(56)}1e9ac7e5`
      await db('days').where({ report_epoch: second?.report_epoch }).update({
        content_hash: legacy,
        content_hash_scheme: null,
      })
      await db('report_versions')
        .where({ report_epoch: second?.report_epoch })
        .update({ content_hash: legacy })
      await db('days').where({ report_epoch: third?.report_epoch }).update({ based_on_hash: legacy })
      const upgraded = await published(db)
      const date: string = (
        await db('days')
          .where({ report_epoch: second?.report_epoch })
          .first(db.raw("to_char(date, 'YYYY-MM-DD') as d"))
      ).d
      await createRepos(db).days.requestRecompute(BENCH_CHAIN_ID, { from: date, to: date })
      await compute(db, 32, 'inline', 1)
      expect(await published(db)).toEqual(upgraded)

      // a discount from before the second day changes its records: a new version, announced, and the next
      // day restated on it
      const account = await db('accounts').orderBy('key').first()
      const blockTime: Date = (await db('days').where({ report_epoch: second?.report_epoch }).first())
        .block_time
      await db('discount_rates').insert({
        account_id: account.id,
        target_fee_rate: '0.02',
        created_by: 'test',
        effective_from: new Date(blockTime.getTime() - 1000),
      })
      await createRepos(db).days.requestRecompute(BENCH_CHAIN_ID, { from: date, to: date }, 'discount')
      await compute(db, 1, 'inline', 2)
      const changed = await published(db)
      expect(changed.days[0]).toEqual(upgraded.days[0])
      expect(changed.days[1]).toMatchObject({ content_hash_scheme: CONTENT_HASH_SCHEME })
      expect(changed.days[1]?.content_hash).not.toBe(legacy)
      expect(changed.days[1]?.visible_version).toBeGreaterThan(second?.visible_version as number)
      expect(changed.days[2]?.based_on_hash).toBe(changed.days[1]?.content_hash)
      expect(changed.days[2]?.visible_version).toBeGreaterThan(third?.visible_version as number)
      expect(changed.events).toBe(upgraded.events + 2)
      expect(changed.versions).toBe(upgraded.versions + 2)
      const log = await createRepos(db).reports.versions({
        chain_id: BENCH_CHAIN_ID,
        report_epoch: second?.report_epoch as string,
      })
      expect(log.map((v) => v.reason)).toEqual(['first', 'discount'])
    }, 120_000)
  },
)
