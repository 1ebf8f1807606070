import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { setupFromDevnet } from '../cli/chain-setup.ts'
import { createLogger } from '../common/logger.ts'
import { createRng } from '../devnet/rng.ts'
import { createJobs } from '../jobs/index.ts'
import { createInlineRunner } from '../jobs/runner.ts'
import { spawnCli } from './helpers/cli.ts'
import { SHORT_VERSIONED_HISTORY, startTestDevnet, type TestDevnet } from './helpers/devnet.ts'
import { computeInline, dayStatuses, recordsHash } from './helpers/records.ts'
import { type PrivateRedis, startPrivateRedis } from './helpers/redis-server.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const DAYS = 24
/** SIGKILLs per run: bounded in CI, more with FAULT_KILLS. */
const KILLS = Number(process.env.FAULT_KILLS ?? 3)

describe.runIf(pgOk)(
  'day jobs survive SIGKILLed workers and a Redis restart (BullMQ, Postgres, anvil)',
  () => {
    let devnet: TestDevnet
    let redis: PrivateRedis
    const cleanups: (() => Promise<void>)[] = []

    beforeAll(async () => {
      devnet = await startTestDevnet('days-faults', {
        // the protocol's versions, from 0.4.0 reports on (redemptions from 1.0.0, day 2)
        ...SHORT_VERSIONED_HISTORY,
        days: DAYS,
        walletCount: 40,
        startDate: '2026-04-20',
        dayIntervalMs: 0,
        blockIntervalMs: 100,
      })
      redis = await startPrivateRedis()
    }, 300_000)
    afterAll(async () => {
      for (const c of cleanups.reverse()) await c().catch(() => undefined)
      await redis?.stop()
      await devnet?.stop()
    })

    test(`behavior: ${KILLS} SIGKILLs of workers at random points and a Redis restart lose and duplicate nothing`, async () => {
      const silent = createLogger({ level: 'silent' })
      // the reference: the same chain computed once, undisturbed
      const reference = await migratedTestDatabase()
      cleanups.push(() => reference.close())
      const jobs = createJobs({
        db: reference.db,
        logger: silent,
        chain: setupFromDevnet(devnet),
        confirmations: 0,
        shardWallets: 4,
      })
      await jobs.follower.syncOnce()
      const inline = createInlineRunner(jobs.processors, silent)
      jobs.useRunner(inline)
      await inline.start()
      await computeInline(reference.db, inline, DAYS)
      await inline.close()
      const expected = await recordsHash(reference.db)

      const faulty = await migratedTestDatabase()
      cleanups.push(() => faulty.close())
      const env = {
        DATA_DIR: devnet.dataDir,
        DATABASE_URL: faulty.url,
        REDIS_URL: redis.url,
        QUEUE_PREFIX: `t${randomBytes(4).toString('hex')}`,
        RPC_URL: devnet.rpcUrl,
        CHAIN: 'devnet',
        LOG_LEVEL: 'warn',
        JOB_LOCK_MS: '2000',
        DAY_SHARD_WALLETS: '2',
        WORKER_CONCURRENCY: '2',
      }
      const workers = await Promise.all([0, 1].map(() => spawnCli(['worker'], env, async () => true)))
      for (const w of workers) cleanups.push(() => w.stop())
      const rng = createRng(process.env.FAULT_SEED ?? 7) // the kill points are random but reproducible
      const killedWhile: number[] = []
      const computed = async () =>
        (await dayStatuses(faulty.db)).filter((d) => d.status === 'computed').length
      // the kills start once the workers compute days, at random points 100-600 ms apart
      const firstDeadline = Date.now() + 60_000
      while ((await computed()) < 1) {
        if (Date.now() > firstDeadline) {
          throw new Error(`no day computed:\n${workers.map((w) => w.output()).join('\n')}`)
        }
        await new Promise((r) => setTimeout(r, 50))
      }
      for (let kill = 0; kill < KILLS; kill++) {
        await new Promise((r) => setTimeout(r, 100 + rng.next() * 500))
        const index = Math.floor(rng.next() * workers.length)
        const victim = workers[index]!
        killedWhile.push(await computed())
        await new Promise<void>((resolve) => {
          victim.child.once('exit', () => resolve())
          victim.child.kill('SIGKILL')
        })
        if (kill === Math.floor(KILLS / 2)) {
          await redis.kill() // the queue, its flows and schedulers are gone
          await new Promise((r) => setTimeout(r, 300))
          await redis.start()
        }
        const restarted = await spawnCli(['worker'], env, async () => true)
        cleanups.push(() => restarted.stop())
        workers[index] = restarted
      }
      const deadline = Date.now() + 240_000
      for (;;) {
        const days = await dayStatuses(faulty.db)
        const failed = days.find((d) => d.status === 'failed')
        if (failed)
          throw new Error(
            `day ${failed.date} failed: ${failed.error}\n${workers.map((w) => w.output()).join('\n')}`,
          )
        if (days.length === DAYS && days.every((d) => d.status === 'computed')) break
        if (Date.now() > deadline) {
          throw new Error(
            `days not computed: ${JSON.stringify(days)}\n${workers.map((w) => w.output()).join('\n')}`,
          )
        }
        await new Promise((r) => setTimeout(r, 250))
      }
      // some kills landed while days were being computed
      expect(
        killedWhile.some((n) => n > 0 && n < DAYS),
        `computed days at each kill: ${killedWhile}`,
      ).toBe(true)
      expect(await recordsHash(faulty.db)).toBe(expected)
      const rows = await faulty.db('wallet_records').count({ n: '*' }).first()
      const wallets = await faulty.db('days').sum({ n: 'wallets' }).first()
      expect(Number(rows?.n)).toBe(Number(wallets?.n))
    }, 400_000)
  },
)
