import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type DbHandle, openDb } from '../db/index.ts'
import { type DevnetHandle, startDevnet } from '../devnet/index.ts'
import { cli, cliFails, spawnCli } from './helpers/cli.ts'
import { SHORT_VERSIONED_HISTORY } from './helpers/devnet.ts'
import { createTestDatabase, postgresAvailable, REDIS_URL, redisAvailable } from './helpers/services.ts'

const DAYS = 8
const FIRST = '2026-04-01'
const LAST = '2026-04-08'

interface DayJson {
  date: string
  report_epoch: number
  status: string
  wallets: number | null
  engine_version: string | null
  computed_at: string | null
}
interface Summary {
  from: string
  to: string
  days: number
  computed: number
  duration_ms: number
}

let devnet: DevnetHandle
let dataDir: string
const cleanups: (() => Promise<void>)[] = []

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-backfill-'))
  // the protocol's versions from 0.4.0 reports on: a backfill from the first report crosses them
  devnet = await startDevnet({
    dataDir,
    days: DAYS,
    walletCount: 30,
    startDate: FIRST,
    dayIntervalMs: 0,
    ...SHORT_VERSIONED_HISTORY,
  })
}, 60_000)

afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
  await devnet?.stop()
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true })
})

/** What the days table and the visible wallet records hold: equal snapshots mean nothing was rewritten. */
async function snapshot(dbh: DbHandle) {
  const { db } = dbh
  try {
    const days: {
      date: string
      report_epoch: string
      status: string
      visible_version: number
      last_version: number
      content_hash: string
      computed_at: Date
    }[] = await db('days')
      .select(
        db.raw(`to_char(date, 'YYYY-MM-DD') as date`),
        'report_epoch',
        'status',
        'visible_version',
        'last_version',
        'content_hash',
        'computed_at',
      )
      .orderBy('block_number')
    const rows: Record<string, unknown>[] = await db('wallet_records as r')
      .join('days as d', function () {
        this.on('d.chain_id', 'r.chain_id')
          .andOn('d.report_epoch', 'r.report_epoch')
          .andOn('d.visible_version', 'r.version')
      })
      .select('r.*')
      .orderBy(['r.report_epoch', 'r.address'])
    const hash = createHash('sha256')
    for (const { version: _version, ...row } of rows) hash.update(`${JSON.stringify(row)}\n`)
    return {
      days: days.map((d) => ({ ...d, computed_at: d.computed_at.toISOString() })),
      rows: rows.length,
      records: hash.digest('hex'),
    }
  } finally {
    await dbh.close()
  }
}

const contentOf = (s: Awaited<ReturnType<typeof snapshot>>) => ({
  rows: s.rows,
  records: s.records,
  days: s.days.map((d) => ({ date: d.date, report_epoch: d.report_epoch, content_hash: d.content_hash })),
})

function expectAllComputed(days: DayJson[]) {
  expect(days.map((d) => d.date)).toEqual(Array.from({ length: DAYS }, (_, i) => `2026-04-0${i + 1}`))
  for (const day of days) {
    expect(day).toMatchObject({
      status: 'computed',
      report_epoch: expect.any(Number),
      wallets: expect.any(Number),
      engine_version: expect.any(String),
      computed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    })
  }
}

describe('lsreport backfill and days on PGlite (inline runner)', () => {
  let env: Record<string, string>
  const pglite = () => openDb({ pgliteDir: path.join(dataDir, 'pg') })

  beforeAll(async () => {
    env = { DATA_DIR: dataDir, RPC_URL: devnet.rpcUrl, CHAIN: 'devnet', LOG_LEVEL: 'warn' }
    const synced = await cli<{ reports: string[] }>(['sync'], env)
    expect(synced.reports).toHaveLength(DAYS)
  }, 60_000)

  test('behavior: bad dates and a range past the ingested reports fail with a clear error', async () => {
    const bad = await cliFails(['backfill', '--from', FIRST, '--to', '2026-04-31'], env)
    expect(bad.code).toBe(2) // a usage error
    expect(bad.stderr).toContain(
      'lsreport: --to must be a date YYYY-MM-DD from 1970-01-01 (got "2026-04-31")',
    )
    const reversed = await cliFails(['backfill', '--from', LAST, '--to', FIRST], env)
    expect(reversed.code).toBe(2)
    expect(reversed.stderr).toContain(`lsreport: --from ${LAST} is after --to ${FIRST}`)
    const beyond = await cliFails(['backfill', '--from', FIRST, '--to', '2026-04-20'], env)
    expect(beyond.code).toBe(1) // the command line is fine; the store has no such report yet
    expect(beyond.stderr).toContain(
      'lsreport: --to 2026-04-20 is after the latest ingested report: reports are ingested up to 2026-04-08; run `lsreport sync`',
    )
  }, 60_000)

  test('behavior: sync --follow prints one JSON object per line, one per pass', async () => {
    const follow = await spawnCli(['sync', '--follow', '--interval', '50'], env, async () => true)
    const lines = () => follow.stdout().split('\n').filter(Boolean)
    const deadline = Date.now() + 30_000
    while (lines().length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    await follow.stop()
    expect(lines().length).toBeGreaterThanOrEqual(3)
    for (const line of lines()) {
      expect(JSON.parse(line)).toMatchObject({ head: expect.any(String), synced_to: expect.any(String) })
    }
  })

  test('behavior: a backfill computes every day of the range; running it again changes nothing', async () => {
    const summary = await cli<Summary>(['backfill', '--from', FIRST, '--to', LAST], env)
    expect(summary).toMatchObject({ from: FIRST, to: LAST, days: DAYS, computed: DAYS })
    expect(summary.duration_ms).toBeGreaterThan(0)
    expectAllComputed(await cli<DayJson[]>(['days', '--json'], env))
    const first = await snapshot(await pglite())
    expect(first.rows).toBeGreaterThan(DAYS)

    expect(await cli<Summary>(['backfill', '--from', FIRST, '--to', LAST], env)).toMatchObject({
      days: DAYS,
      computed: DAYS,
    })
    expect(await snapshot(await pglite())).toEqual(first)
  }, 90_000)

  test('behavior: --recompute interrupted by SIGINT exits 130; rerunning completes it with identical records, days outside the range untouched', async () => {
    const before = await snapshot(await pglite())
    const [from, to] = ['2026-04-02', '2026-04-07']
    const run = await spawnCli(['backfill', '--from', from, '--to', to, '--recompute'], env, async () => true)
    const deadline = Date.now() + 30_000
    while (!run.output().includes('backfill 0/6 days computed')) {
      if (Date.now() > deadline || run.child.exitCode !== null) throw new Error(run.output())
      await new Promise((r) => setTimeout(r, 25))
    }
    // the range is prepared and the runner is starting: let it work a moment, then interrupt
    await new Promise((r) => setTimeout(r, 100))
    const exited = new Promise<number | null>((resolve) => run.child.once('exit', (code) => resolve(code)))
    run.child.kill('SIGINT')
    expect(await exited, run.output()).toBe(130)
    const message = /backfill interrupted: (\d+)\/6 days computed; run the same command again to resume/.exec(
      run.output(),
    )
    expect(message, run.output()).not.toBeNull()
    expect(Number(message![1])).toBeLessThan(6)
    expect(run.output()).not.toContain('"computed":6')

    // resume: the days sent back by --recompute are still pending
    expect(await cli<Summary>(['backfill', '--from', from, '--to', to], env)).toMatchObject({
      days: 6,
      computed: 6,
    })
    const after = await snapshot(await pglite())
    expect(contentOf(after)).toEqual(contentOf(before))
    after.days.forEach((day, i) => {
      const earlier = before.days[i]!
      if (day.date >= from && day.date <= to) {
        expect(day.computed_at > earlier.computed_at, day.date).toBe(true)
        // computed again with the same records: no new version published (issue 36)
        expect(day.last_version, day.date).toBeGreaterThan(earlier.last_version)
        expect(day.visible_version, day.date).toBe(earlier.visible_version)
      } else expect(day, day.date).toEqual(earlier)
    })
    expectAllComputed(await cli<DayJson[]>(['days', '--json'], env))
  }, 90_000)
})

const servicesOk = (await postgresAvailable()) && (await redisAvailable())

describe.runIf(servicesOk)('lsreport backfill on Postgres with BullMQ (Redis)', () => {
  test('behavior: the backfill runs its own worker; with a `lsreport worker` alongside, a recompute gives identical records', async () => {
    const database = await createTestDatabase()
    cleanups.push(database.drop)
    const env = {
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      REDIS_URL,
      QUEUE_PREFIX: `t${randomBytes(4).toString('hex')}`,
      RPC_URL: devnet.rpcUrl,
      CHAIN: 'devnet',
      LOG_LEVEL: 'warn',
    }
    expect((await cli<{ reports: string[] }>(['sync'], env)).reports).toHaveLength(DAYS)
    expect(await cli<Summary>(['backfill', '--from', FIRST, '--to', LAST], env)).toMatchObject({
      days: DAYS,
      computed: DAYS,
    })
    expectAllComputed(await cli<DayJson[]>(['days', '--json'], env))
    const first = await snapshot(await openDb({ databaseUrl: database.url }))

    const worker = await spawnCli(['worker'], env, async () => true)
    cleanups.push(worker.stop)
    const args = ['backfill', '--from', FIRST, '--to', LAST, '--recompute']
    expect(await cli<Summary>(args, env)).toMatchObject({ days: DAYS, computed: DAYS })
    await worker.stop()
    const again = await snapshot(await openDb({ databaseUrl: database.url }))
    expect(contentOf(again)).toEqual(contentOf(first))
    // one run per day (an abandoned run started again would show in the worker's warnings), and with the
    // same records no new version published (issue 36)
    again.days.forEach((day, i) => {
      expect(day.last_version, `${day.date}; the worker wrote:\n${worker.output()}`).toBe(
        first.days[i]!.last_version + 1,
      )
      expect(day.visible_version, day.date).toBe(first.days[i]!.visible_version)
    })
  }, 90_000)
})
