import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { setupFromDevnet } from '../cli/chain-setup.ts'
import { createLogger } from '../common/logger.ts'
import type { Db } from '../db/index.ts'
import { createRepos, inTransaction } from '../db/repos/index.ts'
import { newWebhookSecret } from '../db/repos/webhooks.ts'
import { sealWebhookSecret } from '../db/webhook-secrets.ts'
import { type DevnetHandle, startDevnet } from '../devnet/index.ts'
import { createJobs } from '../jobs/index.ts'
import { createInlineRunner } from '../jobs/runner.ts'
import { createWebhookJobs, WEBHOOK_JOBS } from '../jobs/webhooks/index.ts'
import { spawnCli, TEST_SIGNING_KEY_SECRET, testSealingKey } from './helpers/cli.ts'
import { type PrivateRedis, startPrivateRedis } from './helpers/redis-server.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'
import { startWebhookReceiver, until, type WebhookReceiver } from './helpers/webhook-receiver.ts'

const pgOk = await postgresAvailable()
const silent = createLogger({ level: 'silent' })
/** Worker SIGKILLs while a delivery is in flight: bounded in CI, more with FAULT_KILLS. */
const KILLS = Number(process.env.FAULT_KILLS ?? 3)
const EVENTS = 12

/** An organization subscribed to every event at `url`; returns the webhook's id and secret. */
async function subscribe(db: Db, name: string, url: string) {
  const repos = createRepos(db)
  const org = await repos.orgs.create({ name, canAllowlist: true })
  const id = randomUUID()
  const secret = newWebhookSecret()
  const row = await repos.webhooks.create({
    id,
    orgId: org.id,
    url,
    events: ['day.finalized', 'redeem.satisfied', 'redeem.claimed'],
    description: null,
    secret: sealWebhookSecret(await testSealingKey(), id, secret),
    limit: 25,
  })
  return { ...row, secret }
}

/** Emits `n` events, each in its own transaction (as a fact would be), to every subscribed organization. */
async function emitEvents(db: Db, label: string, n: number) {
  for (let i = 0; i < n; i++) {
    await inTransaction(db, (repos) =>
      repos.webhooks.emit({
        type: 'day.finalized',
        factKey: `test:${label}:${i}`,
        orgId: null,
        data: { label, i },
      }),
    )
  }
}

async function deliveries(db: Db, webhookId: string) {
  return db('webhook_deliveries').where({ webhook_id: webhookId }).select('event_id', 'status', 'attempts')
}

describe.runIf(pgOk)('webhook deliveries survive a receiver outage and SIGKILLed workers', () => {
  let devnet: DevnetHandle
  let dataDir: string
  let receiver: WebhookReceiver
  let redis: PrivateRedis
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-webhooks-faults-'))
    devnet = await startDevnet({
      dataDir,
      days: 2,
      walletCount: 10,
      dayIntervalMs: 0,
      blockIntervalMs: 100,
      history: 'current',
    })
    receiver = await startWebhookReceiver()
    redis = await startPrivateRedis()
  }, 300_000)
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined)
    await receiver?.close()
    await redis?.stop()
    await devnet?.stop()
    await fs.rm(dataDir, { recursive: true, force: true })
  })

  test('behavior: a receiver answering 503, then down, then back gets every event, one 2xx per event id', async () => {
    const dbh = await migratedTestDatabase()
    cleanups.push(() => dbh.close())
    const hook = await subscribe(dbh.db, 'outage', `${receiver.url}/outage`)
    const jobs = createJobs({
      db: dbh.db,
      logger: silent,
      chain: setupFromDevnet(devnet),
      confirmations: 0,
      webhooks: { allowPrivate: true, timeoutMs: 1_000, retryBaseMs: 100, retryWindowMs: 60_000 },
      webhookSealingKey: testSealingKey,
    })
    const runner = createInlineRunner(jobs.processors, silent)
    jobs.useRunner(runner)
    cleanups.push(() => runner.close())
    await runner.start()
    await runner.every('webhooks', 100)

    receiver.behave(({ path: p }) => (p === '/outage' ? 503 : 200))
    await emitEvents(dbh.db, 'outage', EVENTS)
    // counted where the answers are given: an attempt is claimed (and counted in the database) before it is
    // sent, so a second attempt may still be on its way when the database already says 2
    const refusals = (id: string) =>
      receiver.received.filter(
        (r) => r.path === '/outage' && r.answered === 503 && r.headers['webhook-id'] === id,
      ).length
    await until('every event refused twice by the receiver', async () => {
      const log = await deliveries(dbh.db, hook.id)
      return log.length === EVENTS && log.every((d) => refusals(d.event_id) >= 2)
    })
    await receiver.stop()
    const before = (await deliveries(dbh.db, hook.id)).map((d) => d.attempts)
    await until('attempts while the receiver is down', async () => {
      const now = await deliveries(dbh.db, hook.id)
      return now.every((d, i) => d.attempts > (before[i] ?? 0))
    })
    receiver.behave(() => 200)
    await receiver.start()
    await until(
      'every delivery succeeded',
      async () => (await deliveries(dbh.db, hook.id)).every((d) => d.status === 'succeeded'),
      30_000,
    )

    const log = await deliveries(dbh.db, hook.id)
    expect(log).toHaveLength(EVENTS)
    const emitted = new Set(log.map((d) => d.event_id))
    expect(receiver.deliveredIds('/outage')).toEqual(emitted)
    const ok = receiver.received.filter((r) => r.path === '/outage' && r.answered === 200)
    expect(ok.length, 'one 2xx per event id').toBe(EVENTS)
    // the refused attempts carried the same webhook-id as the one that succeeded, validly signed each time
    const wh = new Webhook(hook.secret)
    for (const r of receiver.received.filter((x) => x.path === '/outage' && x.answered !== 0)) {
      expect(emitted.has(r.headers['webhook-id'])).toBe(true)
      wh.verify(r.body, r.headers)
    }
    expect(
      receiver.received.filter((r) => r.path === '/outage' && r.answered === 503).length,
    ).toBeGreaterThanOrEqual(2 * EVENTS)
    await runner.close()
  }, 90_000)

  test(`behavior: ${KILLS} SIGKILLs of \`lsreport worker\` mid-delivery lose no event; the de-duplicated set equals the events emitted`, async () => {
    const dbh = await migratedTestDatabase()
    cleanups.push(() => dbh.close())
    const hook = await subscribe(dbh.db, 'killed', `${receiver.url}/killed`)
    const env = {
      DATA_DIR: dataDir,
      DATABASE_URL: dbh.url,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: `t${randomBytes(4).toString('hex')}`,
      RPC_URL: devnet.rpcUrl,
      CHAIN: 'devnet',
      LOG_LEVEL: 'warn',
      JOB_LOCK_MS: '2000',
      WORKER_CONCURRENCY: '2',
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_TIMEOUT_MS: '1500',
      WEBHOOK_RETRY_BASE_MS: '100',
      // the worker opens the subscriptions' sealed secrets with the API's SIGNING_KEY_SECRET
      SIGNING_KEY_SECRET: TEST_SIGNING_KEY_SECRET,
    }
    // every request to /killed hangs until a worker was killed while sending it
    let killsLeft = KILLS
    receiver.behave(({ path: p }) => (p === '/killed' && killsLeft > 0 ? 'hang' : 200))
    const spawn = () => spawnCli(['worker'], env, async () => true)
    const workers = await Promise.all([spawn(), spawn()])
    for (const w of workers) cleanups.push(() => w.stop())
    await emitEvents(dbh.db, 'killed', EVENTS)

    while (killsLeft > 0) {
      const seen = receiver.received.length
      await until(
        'a delivery in flight',
        async () => receiver.received.slice(seen).some((r) => r.path === '/killed' && r.answered === 0),
        30_000,
      ).catch((err) => {
        throw new Error(`${err.message}\n${workers.map((w) => w.output()).join('\n')}`)
      })
      // the sender is one of the two: both die, two fresh workers take over
      for (const victim of workers) {
        await new Promise<void>((resolve) => {
          victim.child.once('exit', () => resolve())
          victim.child.kill('SIGKILL')
        })
      }
      killsLeft -= 1
      for (let i = 0; i < workers.length; i++) {
        const restarted = await spawn()
        cleanups.push(() => restarted.stop())
        workers[i] = restarted
      }
    }

    // the workers also compute the devnet's days meanwhile: a day finalized later adds an event (and a delivery)
    // after this wait, so the deliveries and what the receiver got are compared as one moment saw them
    let log: Awaited<ReturnType<typeof deliveries>> = []
    let delivered = new Set<string>()
    await until(
      'every delivery succeeded, each delivered',
      async () => {
        // what the receiver got first: a delivery row exists before its request is sent
        delivered = receiver.deliveredIds('/killed')
        log = await deliveries(dbh.db, hook.id)
        return (
          log.length >= EVENTS &&
          log.every((d) => d.status === 'succeeded') &&
          log.every((d) => delivered.has(d.event_id))
        )
      },
      60_000,
    ).catch(async (err) => {
      throw new Error(
        `${err.message}: ${JSON.stringify(await deliveries(dbh.db, hook.id))}\n${workers.map((w) => w.output()).join('\n')}`,
      )
    })
    const emitted = new Set(log.map((d) => d.event_id))
    expect(emitted.size).toBe(log.length)
    // the day.finalized events of the days computed so far are in the set too
    expect(emitted.size).toBeGreaterThanOrEqual(EVENTS)
    // each delivered, and nothing delivered that was not emitted (the receiver's set was read before the rows)
    expect(delivered).toEqual(emitted)
    // the killed attempts were retried with the same webhook-id
    const hung = receiver.received.filter((r) => r.path === '/killed' && r.answered === 0)
    expect(hung.length).toBeGreaterThanOrEqual(KILLS)
    for (const r of hung) expect(receiver.deliveredIds('/killed').has(r.headers['webhook-id'])).toBe(true)
    const wh = new Webhook(hook.secret)
    for (const r of receiver.received.filter((x) => x.path === '/killed' && x.answered === 200)) {
      wh.verify(r.body, r.headers)
    }
  }, 120_000)

  test('behavior: without WEBHOOK_ALLOW_PRIVATE a delivery whose host resolves to loopback is refused before any request, retried, then failed after the retry window', async () => {
    const dbh = await migratedTestDatabase()
    cleanups.push(() => dbh.close())
    const port = new URL(receiver.url).port
    const hook = await subscribe(dbh.db, 'private', `http://localhost:${port}/private`)
    await emitEvents(dbh.db, 'private', 1)
    const [delivery] = await deliveries(dbh.db, hook.id)
    const id = (await dbh.db('webhook_deliveries').where({ webhook_id: hook.id }).first('id')).id as string
    const inline = createInlineRunner({}, silent)
    const deliver = createWebhookJobs({
      db: dbh.db,
      logger: silent,
      options: { allowPrivate: false, timeoutMs: 1_000, retryBaseMs: 10, retryWindowMs: 1_000 },
      sealingKey: testSealingKey,
      runner: () => inline,
    }).processors[WEBHOOK_JOBS.deliver]!
    const attempt = (n: number) =>
      deliver({
        id: `t-${n}`,
        name: WEBHOOK_JOBS.deliver,
        data: { deliveryId: id, attempt: n },
        attemptsMade: 0,
        attempts: 1,
      })
    await attempt(0)
    const first = await dbh.db('webhook_deliveries').where({ id }).first()
    expect(first).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null })
    expect(first.last_error).toMatch(/loopback, private or link-local/)
    // an attempt already claimed does nothing
    expect(await attempt(0)).toEqual({ skipped: true })
    await new Promise((r) => setTimeout(r, 1_100))
    await attempt(1)
    expect(await dbh.db('webhook_deliveries').where({ id }).first()).toMatchObject({
      status: 'failed',
      attempts: 2,
    })
    expect(receiver.received.filter((r) => r.path === '/private')).toEqual([])
    expect(delivery?.status).toBe('pending')
  }, 30_000)
})
