import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { setupFromDevnet } from '../cli/chain-setup.ts'
import { createLogger } from '../common/logger.ts'
import { type DbHandle, migrate, openDb } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { type DevnetHandle, startDevnet } from '../devnet/index.ts'
import { createJobs } from '../jobs/index.ts'
import { createBullRunner, createInlineRunner, type JobRunner } from '../jobs/runner.ts'
import { createPlatformService } from '../platform/service.ts'
import {
  computeInline,
  copyPlatformData,
  dayStatuses,
  dumpVisibleRecords,
  recordsHash,
  verifyRecordsAgainstChain,
  waitAllComputed,
} from './helpers/records.ts'
import { migratedTestDatabase, postgresAvailable, REDIS_URL, redisAvailable } from './helpers/services.ts'

const servicesOk = (await postgresAvailable()) && (await redisAvailable())
const FIRST_DAYS = 30
const LIVE_DAYS = 30
const TOTAL_DAYS = FIRST_DAYS + LIVE_DAYS
const silent = createLogger({ level: 'silent' })

/**
 * Issue 7's end-to-end check: a 60-day devnet history crossing the V3 cutover (2026-05-01), with a loss day,
 * a fee change and a discount set mid-history, computed live by two BullMQ workers on Postgres; then the same
 * history computed from empty tables (a backfill) on Postgres and on PGlite with the inline runner.
 */
describe.runIf(servicesOk)('daily records end to end (Postgres, Redis, anvil)', () => {
  let devnet: DevnetHandle
  let dataDir: string
  let live: DbHandle & { url: string }
  const runners: JobRunner[] = []
  const closers: (() => Promise<void>)[] = []
  let holders: string[] = []
  let liveDump: Record<string, string[]>

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-days-'))
    devnet = await startDevnet({
      dataDir,
      days: FIRST_DAYS,
      walletCount: 40,
      // the versioned history (the default): River 0.4.0 from 2026-04-10, 0.5.0 04-17, loss day 04-22, 1.0.0
      // 04-30, V3 fees from 05-01, fee change 05-05, 1.2.1 05-15, a deny 05-25 lifted 06-04
      startDate: '2026-04-10',
      dayIntervalMs: 0,
      blockIntervalMs: 100,
    })
    const roles = devnet.simulator.deployment.roles
    holders = [
      ...devnet.simulator.state().wallets.map((w) => w.address),
      devnet.contracts.river,
      devnet.contracts.redeemManager,
      roles.collector,
    ]
    live = await migratedTestDatabase()
    closers.push(() => live.close())
  }, 300_000)

  afterAll(async () => {
    for (const runner of runners) await runner.close().catch(() => undefined)
    for (const close of closers.reverse()) await close().catch(() => undefined)
    await devnet?.stop()
    await fs.rm(dataDir, { recursive: true, force: true })
  })

  test('behavior: two BullMQ workers compute every day live; records equal the chain to the wei', async () => {
    const chain = setupFromDevnet(devnet)
    const prefix = `t-days-${Date.now()}`
    for (let i = 0; i < 2; i++) {
      const jobs = createJobs({ db: live.db, logger: silent, chain, confirmations: 0 })
      const runner = createBullRunner(jobs.processors, {
        redisUrl: REDIS_URL,
        prefix,
        concurrency: 2,
        lockMs: 15_000,
        logger: silent,
      })
      jobs.useRunner(runner)
      await runner.start()
      runners.push(runner)
      if (i === 0) {
        await runner.every('sync', 300)
        await runner.every('days', 300)
      }
    }
    await waitAllComputed(live.db, FIRST_DAYS)

    // a platform registers wallets (some holders) and a discount at day 30: they count from day 31 on
    const { db } = live
    const repos = createRepos(db)
    const org = await repos.orgs.create({ name: 'platform', canAllowlist: true })
    const other = await repos.orgs.create({ name: 'other', canAllowlist: true })
    const platform = createPlatformService(db)
    const segregated = await platform.createAccount(org.id, 'segregated-1', 'test')
    const omnibus = await platform.createAccount(org.id, 'omnibus', 'test')
    const elsewhere = await platform.createAccount(other.id, 'other-1', 'test')
    const simulated = devnet.simulator.state().wallets.filter((w) => w.shares > 0n)
    expect(simulated.length).toBeGreaterThanOrEqual(8)
    const attach = async (orgRow: typeof org, account: string, address: string) =>
      platform.createWallet(orgRow, account, { address, type: 'ETH', allowlisted: false }, 'test')
    await attach(org, segregated.id, simulated[0]!.address)
    for (const w of simulated.slice(1, 4)) await attach(org, omnibus.id, w.address)
    await attach(other, elsewhere.id, simulated[4]!.address)
    await platform.addDiscountRate(org.id, omnibus.id, '0.05', 'test')

    // 30 more days, one at a time, while the workers follow
    for (let day = 0; day < LIVE_DAYS; day++) {
      await devnet.simulator.runDays(1)
      if (day === 10) {
        // an on-platform wallet leaves the platform mid-history
        await platform.transitionWallet(org.id, omnibus.id, simulated[3]!.address, 'remove', 'test')
      }
      await new Promise((r) => setTimeout(r, 150))
    }
    await waitAllComputed(live.db, TOTAL_DAYS, 180_000)

    const checked = await verifyRecordsAgainstChain(live.db, {
      rpcUrl: devnet.rpcUrl,
      river: devnet.contracts.river,
      holders,
    })
    expect(checked.days).toBe(TOTAL_DAYS)
    expect(checked.walletDays).toBeGreaterThan(TOTAL_DAYS * 8)

    // the history crossed the protocol's versions: reports before River 1.0.0 (ConsensusLayerDataUpdate) and
    // after it, every one a day that equals the chain (above); a deny set and lifted under 1.2.1 is stored as
    // the Allowlist stored it (DENY, then 0), not as the events carried it
    const shapes = await db('oracle_reports').distinct('report_shape').pluck('report_shape')
    expect(shapes.sort()).toEqual(['legacy', 'v1'])
    const denied = await db('allowlist_permissions')
      .where('permissions', (1n << 255n).toString())
      .select('address', 'block_number')
      .first()
    expect(denied).toBeDefined()
    const lifted = await db('allowlist_permissions')
      .where({ address: denied.address, permissions: '0' })
      .where('block_number', '>', denied.block_number)
    expect(lifted.length).toBeGreaterThan(0)

    // the history has what the issue asks for: the cutover, a loss day, a fee change
    const protocol = await db('protocol_records').select('*').orderBy('block_number')
    expect(protocol).toHaveLength(TOTAL_DAYS)
    const models = await db('wallet_records').distinct('fee_model').pluck('fee_model')
    expect(models.sort()).toEqual(['v0', 'v3'])
    expect(protocol.some((p) => p.gross_fee_lseth === '0')).toBe(true)
    expect(new Set(protocol.map((p) => p.gross_fee_rate)).size).toBeGreaterThan(1)
    expect(protocol.at(-1)?.a_srr_7d).toMatch(/^\d+\.\d+$/)

    // attribution: from the first report after registration; the discount gives rebates; removal stops fees
    const registeredAt = (await db('wallets').min('attributed_from as t').first())?.t as Date
    const omnibusRecords = await db('wallet_records as w')
      .join('days as d', function () {
        this.on('d.report_epoch', 'w.report_epoch').andOn('d.visible_version', 'w.version')
      })
      .where('w.address', simulated[1]!.address.toLowerCase())
      .select('w.*', 'd.block_time')
      .orderBy('d.block_number')
    for (const r of omnibusRecords) {
      const attributed = (r.block_time as Date) > registeredAt
      expect(r.account_id, `attribution at ${r.date}`).toBe(attributed ? omnibus.id : null)
      if (attributed && BigInt(r.gross_rewards_eth) > 0n) {
        expect(BigInt(r.platform_fees_eth)).toBeGreaterThan(0n)
        expect(r.target_fee_rate).toBe('0.05')
        expect(BigInt(r.rebate_eth)).toBeGreaterThan(0n)
      }
      if (!attributed) expect(r.platform_fees_eth).toBe('0')
    }
    const removed = await db('wallet_records as w')
      .join('days as d', function () {
        this.on('d.report_epoch', 'w.report_epoch').andOn('d.visible_version', 'w.version')
      })
      .where('w.address', simulated[3]!.address.toLowerCase())
      .select('w.on_platform')
      .orderBy('d.block_number')
    expect(removed.some((r) => r.on_platform === true)).toBe(true)
    expect(removed.at(-1)?.on_platform).toBe(false)

    // platform fee records are the sums of the org's on-platform wallets
    const platformFees = await db.raw(
      `select w.report_epoch, sum(w.platform_fees_eth)::text as fees from wallet_records w
       join days d on d.report_epoch = w.report_epoch and d.visible_version = w.version
       where w.on_platform and w.org_id = ? group by 1 order by 1`,
      [org.id],
    )
    const stored = await db('fee_records as f')
      .join('days as d', function () {
        this.on('d.report_epoch', 'f.report_epoch').andOn('d.visible_version', 'f.version')
      })
      .where({ 'f.kind': 'platform', 'f.org_id': org.id })
      .select('f.report_epoch', db.raw('f.platform_fees_eth::text as fees'))
      .orderBy('f.report_epoch')
    expect(stored).toEqual(platformFees.rows)
    liveDump = await dumpVisibleRecords(db)
  }, 600_000)

  /** Equal record dumps, or a failure naming the table and the first rows only one side has. */
  function expectSameRecords(
    actual: Record<string, string[]>,
    expected: Record<string, string[]>,
    what: string,
  ): void {
    for (const [table, rows] of Object.entries(expected)) {
      const here = actual[table] ?? []
      const mine = new Set(here)
      const theirs = new Set(rows)
      expect({
        what,
        table,
        rows: here.length,
        only_here: here.filter((r) => !theirs.has(r)).slice(0, 3),
        only_live: rows.filter((r) => !mine.has(r)).slice(0, 3),
      }).toEqual({ what, table, rows: rows.length, only_here: [], only_live: [] })
    }
  }

  /** Computes the whole history from empty record tables (same platform data) on the inline runner. */
  async function computeFromEmpty(db: DbHandle['db']): Promise<void> {
    await copyPlatformData(live.db, db)
    const jobs = createJobs({ db, logger: silent, chain: setupFromDevnet(devnet), confirmations: 0 })
    await jobs.follower.syncOnce()
    const runner = createInlineRunner(jobs.processors, silent)
    jobs.useRunner(runner)
    runners.push(runner)
    await runner.start()
    await computeInline(db, runner, TOTAL_DAYS)
  }

  test('behavior: the same history computed from empty tables gives byte-identical records (Postgres)', async () => {
    const backfill = await migratedTestDatabase()
    closers.push(() => backfill.close())
    await computeFromEmpty(backfill.db)
    // the live records have not moved since the first test, and the recomputed ones equal them
    expectSameRecords(await dumpVisibleRecords(live.db), liveDump, 'live now')
    expectSameRecords(await dumpVisibleRecords(backfill.db), liveDump, 'from empty')
    const hashes = async (db: typeof live.db) => db('days').orderBy('block_number').pluck('content_hash')
    expect(await hashes(backfill.db)).toEqual(await hashes(live.db))
  }, 300_000)

  test('behavior: on PGlite with the inline runner (npm start mode) the records are the same and check out', async () => {
    const pglite = await openDb({})
    closers.push(() => pglite.close())
    await migrate(pglite.db)
    await computeFromEmpty(pglite.db)
    expectSameRecords(await dumpVisibleRecords(pglite.db), liveDump, 'from empty on PGlite')
    const checked = await verifyRecordsAgainstChain(pglite.db, {
      rpcUrl: devnet.rpcUrl,
      river: devnet.contracts.river,
      holders,
    })
    expect(checked.days).toBe(TOTAL_DAYS)
  }, 300_000)

  test('behavior: a recompute with unchanged inputs changes nothing; a changed discount or fee schedule flows into later days', async () => {
    const { db } = live
    const before = await recordsHash(db)
    const days = await dayStatuses(db)
    const middle = days[40]!
    const dayBefore = await createRepos(db).days.get(devnet.chainId, middle.report_epoch)
    await createRepos(db).days.requestRecompute(devnet.chainId, { from: middle.date, to: middle.date })
    await waitAllComputed(db, TOTAL_DAYS)
    expect(await recordsHash(db)).toBe(before)
    const day = await createRepos(db).days.get(devnet.chainId, middle.report_epoch)
    // unchanged records publish nothing (issue 36): the day ran again (a version number spent) and kept its
    // visible version; no other version of its records is kept, the restatement log has no new version
    expect(day?.last_version).toBeGreaterThan(dayBefore?.last_version as number)
    expect(day?.visible_version).toBe(dayBefore?.visible_version)
    expect(day?.content_hash).toBe(dayBefore?.content_hash)
    const versions = await db('wallet_records')
      .where({ report_epoch: middle.report_epoch })
      .distinct('version')
    expect(versions).toHaveLength(1)
    const log = await createRepos(db).reports.versions({
      chain_id: devnet.chainId,
      report_epoch: middle.report_epoch,
    })
    expect(log.map((v) => v.reason)).toEqual(['first'])
    expect(log[0]?.visible_until).toBeNull()

    // a discount rate row moved back to day 45: recomputing from day 45 changes day 45 and every later day
    const account = await db('accounts').where({ key: 'omnibus' }).first()
    const at = days[45]!
    const blockTime = (await db('days').where({ report_epoch: at.report_epoch }).first()).block_time as Date
    await db('discount_rates')
      .where({ account_id: account.id })
      .update({ target_fee_rate: '0.02', effective_from: new Date(blockTime.getTime() - 1000) })
    const firstDaysBefore = await db('days').orderBy('block_number').limit(45).pluck('content_hash')
    await createRepos(db).days.requestRecompute(devnet.chainId, { from: at.date, to: at.date })
    await waitAllComputed(db, TOTAL_DAYS)
    const after = await db('days').orderBy('block_number').pluck('content_hash')
    expect(after.slice(0, 45)).toEqual(firstDaysBefore)
    const changed = await db('wallet_records as w')
      .join('days as d', function () {
        this.on('d.report_epoch', 'w.report_epoch').andOn('d.visible_version', 'w.version')
      })
      .where({ 'w.account_id': account.id, 'w.report_epoch': days[50]!.report_epoch })
      .select('w.target_fee_rate', 'w.discount_rate', 'w.on_platform')
    expect(changed.filter((r) => r.on_platform).length).toBeGreaterThan(0)
    for (const r of changed) expect(r.target_fee_rate).toBe(r.on_platform ? '0.02' : null)
    await verifyRecordsAgainstChain(db, { rpcUrl: devnet.rpcUrl, river: devnet.contracts.river, holders })

    // a fee schedule added from day 55 on: a recompute of day 55 gives the new split there and after it,
    // and keeps exactly the published versions (the restatement log's), no stale rows of abandoned runs
    const from55 = (await db('days').where({ report_epoch: days[54]!.report_epoch }).first())
      .block_time as Date
    await db('fee_schedules').insert({
      id: 'v3-test-change',
      model: 'v3',
      effective_from: new Date(from55.getTime() - 1000),
      shares: JSON.stringify({ lc: '0.5', tech_provider: '0.1', operators: '0.2', platform: '0.2' }),
    })
    await createRepos(db).days.requestRecompute(
      devnet.chainId,
      { from: days[54]!.date, to: days[54]!.date },
      'fee schedule',
    )
    await waitAllComputed(db, TOTAL_DAYS)
    const restated = await createRepos(db).reports.versions({
      chain_id: devnet.chainId,
      report_epoch: days[54]!.report_epoch,
    })
    expect(restated.at(-1)?.reason).toBe('fee schedule')
    const after55 = await createRepos(db).reports.versions({
      chain_id: devnet.chainId,
      report_epoch: days[56]!.report_epoch,
    })
    expect(after55.at(-1)?.reason).toBe('predecessor restated')
    const schedules = await db('wallet_records as w')
      .join('days as d', function () {
        this.on('d.report_epoch', 'w.report_epoch').andOn('d.visible_version', 'w.version')
      })
      .select(db.raw("to_char(d.date, 'YYYY-MM-DD') as date"), 'w.fee_schedule_id')
      .groupBy('d.date', 'w.fee_schedule_id')
      .orderBy('d.date')
    for (const row of schedules) {
      expect(row.fee_schedule_id, row.date).toBe(
        row.date >= days[54]!.date
          ? 'v3-test-change'
          : row.date >= '2026-05-01'
            ? 'v3-default'
            : 'v0-default',
      )
    }
    type PerDay = { report_epoch: string; n: string }
    const versionsPerDay: PerDay[] = await db('wallet_records')
      .select('report_epoch')
      .countDistinct({ n: 'version' })
      .groupBy('report_epoch')
    const logged: PerDay[] = await db('report_versions')
      .select('report_epoch')
      .count({ n: '*' })
      .groupBy('report_epoch')
    const loggedOf = new Map(logged.map((v) => [String(v.report_epoch), Number(v.n)]))
    for (const v of versionsPerDay)
      expect(Number(v.n), String(v.report_epoch)).toBe(loggedOf.get(String(v.report_epoch)))
    await verifyRecordsAgainstChain(db, { rpcUrl: devnet.rpcUrl, river: devnet.contracts.river, holders })
  }, 300_000)

  test('behavior: every day reconciles within its bound; a corrupted stored record fails the next day', async () => {
    const { db } = live
    const rows = await db('day_reconciliations as r')
      .join('days as d', function () {
        this.on('d.report_epoch', 'r.report_epoch').andOn('d.visible_version', 'r.version')
      })
      .select('r.*')
    expect(rows).toHaveLength(TOTAL_DAYS)
    for (const r of rows) {
      expect(r.shares_residual).toBe('0')
      expect(BigInt(r.gross_residual) >= 0n && BigInt(r.gross_residual) <= BigInt(r.holders)).toBe(true)
      expect(BigInt(r.fees_residual) <= BigInt(r.holders) + 2n).toBe(true)
      expect(BigInt(r.fees_residual) >= -BigInt(r.holders) - 2n).toBe(true)
    }
    // the diagnosis of a day that does not reconcile reads nothing amiss in any day of a sound history (every
    // stored balance is the previous one plus the period's transfers; every day's balances sum to its supply)
    const records = createRepos(db).records
    const ordered = await db('days as d')
      .join('oracle_reports as r', function () {
        this.on('r.chain_id', 'd.chain_id').andOn(db.raw('r.epoch::bigint = d.report_epoch'))
      })
      .orderBy('d.block_number')
      .select('d.report_epoch', 'd.visible_version', 'd.block_number', 'd.tx_index', 'r.total_supply')
    const keyOf = (d: (typeof ordered)[number]) => ({
      chainId: devnet.chainId,
      epoch: String(d.report_epoch),
      version: d.visible_version as number,
    })
    const positionOf = (d: (typeof ordered)[number]) => ({
      block: String(d.block_number),
      txIndex: d.tx_index,
    })
    for (const [i, d] of ordered.entries()) {
      const before = i > 0 ? ordered[i - 1] : undefined
      const found = await records.reconciliationSuspects(keyOf(d), before ? keyOf(before) : null, {
        after: before ? positionOf(before) : null,
        upTo: positionOf(d),
      })
      expect(found.wallets, `day ${i}`).toEqual([])
      expect(found.previousBalances, `day ${i}`).toBe(before ? before.total_supply : null)
    }
    // a stored balance off by one share is named, with what the store says it should be
    const [k0, k1] = [ordered[40]!, ordered[41]!]
    const planted = await db('wallet_records')
      .where({ report_epoch: k1.report_epoch, version: k1.visible_version })
      .where('balance_lseth', '>', 0)
      .orderBy('address')
      .first()
    const plant = (balance: string) =>
      db('wallet_records')
        .where({ report_epoch: k1.report_epoch, version: k1.visible_version, address: planted.address })
        .update({ balance_lseth: balance })
    await plant((BigInt(planted.balance_lseth) + 1n).toString())
    const off = await records.reconciliationSuspects(keyOf(k1), keyOf(k0), {
      after: positionOf(k0),
      upTo: positionOf(k1),
    })
    await plant(planted.balance_lseth)
    expect(off.wallets).toEqual([
      {
        address: planted.address,
        stored: (BigInt(planted.balance_lseth) + 1n).toString(),
        expected: planted.balance_lseth,
      },
    ])

    // one share more in a stored record of day 50: day 51 (which reads it) no longer reconciles, and its error
    // says the previous day's records no longer add up
    const days = await dayStatuses(db)
    const corrupted = await db('days').where({ report_epoch: days[49]!.report_epoch }).first()
    const victim = await db('wallet_records')
      .where({ report_epoch: corrupted.report_epoch, version: corrupted.visible_version })
      .where('balance_lseth', '>', 0)
      .first()
    const bump = (delta: bigint) =>
      db('wallet_records')
        .where({ report_epoch: victim.report_epoch, version: victim.version, address: victim.address })
        .update({ balance_lseth: (BigInt(victim.balance_lseth) + delta).toString() })
    await bump(1n)
    await createRepos(db).days.requestRecompute(devnet.chainId, { from: days[50]!.date, to: days[50]!.date })
    await expect(waitAllComputed(db, TOTAL_DAYS)).rejects.toThrow(
      /do not reconcile.*balances sum to.*The store shows: the previous day's stored balances .* sum to .*its records changed after it was computed/,
    )
    expect(await recordsHash(db)).not.toBe('')
    // repaired, and retried: every day is computed again
    await bump(0n)
    await db('days').where({ status: 'failed' }).update({ status: 'pending' })
    await waitAllComputed(db, TOTAL_DAYS)
  }, 300_000)
})
