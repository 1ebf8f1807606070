import { randomBytes, randomUUID } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, test } from 'vitest'
import { createLogger } from '../common/logger.ts'
import { createRepos, inTransaction } from '../db/repos/index.ts'
import type { BreakerPolicy } from '../db/repos/webhooks.ts'
import { createBullRunner, createInlineRunner, type JobRunner } from '../jobs/runner.ts'
import { createWebhookJobs, WEBHOOK_JOBS, type WebhookOptions } from '../jobs/webhooks/index.ts'
import { http, orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { testSealingKey } from './helpers/cli.ts'
import { scrape } from './helpers/prometheus.ts'
import { migratedTestDatabase, postgresAvailable, REDIS_URL, redisAvailable } from './helpers/services.ts'
import { startWebhookReceiver, until, type WebhookReceiver } from './helpers/webhook-receiver.ts'

const pgOk = await postgresAvailable()
const redisOk = await redisAvailable()
const silent = createLogger({ level: 'silent' })

/** Subscriptions of the noisy tenant, all to a receiver that accepts and never answers. */
const DEAD = 10
/** The bound within which the healthy tenant's receiver gets each event. */
const BOUND_MS = 10_000
/** The noisy tenant's own backlog, on top of the events every organization gets. */
const NOISY_EVENTS = 100

const OPTIONS: WebhookOptions = {
  allowPrivate: true,
  // as the issue measured: about 3 s lost per attempt to a receiver that never answers
  timeoutMs: 3_000,
  connectTimeoutMs: 1_000,
  retryBaseMs: 200,
  retryWindowMs: 600_000,
  breakerFailures: 3,
  breakerMinMs: 0,
  breakerProbeMs: 2_000,
}

type RunnerKind = 'inline' | 'bullmq'

function buildRunner(kind: RunnerKind, api: TestApi): JobRunner {
  let runner: JobRunner | undefined
  const { processors } = createWebhookJobs({
    db: api.dbh.db,
    logger: silent,
    options: OPTIONS,
    sealingKey: testSealingKey,
    runner: () => runner as JobRunner,
  })
  runner =
    kind === 'inline'
      ? createInlineRunner(processors, silent)
      : createBullRunner(processors, {
          redisUrl: REDIS_URL,
          prefix: `t${randomBytes(4).toString('hex')}`,
          concurrency: 2,
          logger: silent,
        })
  return runner
}

/** Emits an event in its own transaction, as a fact would; returns its id and when it was written. */
async function emit(api: TestApi, label: string, orgId: string | null) {
  const at = Date.now()
  const id = await inTransaction(api.dbh.db, (repos) =>
    repos.webhooks.emit({
      type: orgId ? 'wallet.allowlisted' : 'day.finalized',
      factKey: `test:${label}`,
      orgId,
      data: { label },
    }),
  )
  if (!id) throw new Error(`event ${label} not emitted`)
  return { id, at }
}

const cases: RunnerKind[] = ['inline', ...(redisOk ? (['bullmq'] as const) : [])]

describe.runIf(pgOk)('fair webhook delivery: one tenant’s dead receivers never delay another’s', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined)
  })

  test.each(cases)(
    'behavior (%s runner): the healthy receiver gets every event within 10 s while 10 subscriptions of another tenant hang; the breaker pauses them (GET and metrics), their deliveries wait; a resume and the probes deliver them',
    async (kind) => {
      const api = await startTestApi('postgres', { WEBHOOK_ALLOW_PRIVATE: '1', METRICS_TENANT_LABELS: '1' })
      cleanups.push(() => api.close())
      const healthy: WebhookReceiver = await startWebhookReceiver()
      cleanups.push(() => healthy.close())
      const dead: WebhookReceiver = await startWebhookReceiver()
      cleanups.push(() => dead.close())
      // accepts the connection, reads the request and stays silent
      dead.behave(() => 'hang')

      const noisy = await orgWithToken(api, { name: 'noisy' })
      const quiet = await orgWithToken(api, { name: 'quiet' })
      const noisyCall = http(api.url, noisy.token)
      const quietCall = http(api.url, quiet.token)
      const deadHooks: { id: string; secret: string }[] = []
      for (let i = 0; i < DEAD; i++) {
        const res = await noisyCall('POST', '/v1/webhooks', {
          url: `${dead.url}/dead-${i}`,
          events: ['day.finalized', 'wallet.allowlisted'],
        })
        expect(res.status).toBe(201)
        deadHooks.push(res.body)
      }
      const hook = await quietCall('POST', '/v1/webhooks', {
        url: `${healthy.url}/quiet`,
        events: ['day.finalized', 'wallet.allowlisted'],
      })
      expect(hook.status).toBe(201)
      expect((await quietCall('GET', `/v1/webhooks/${hook.body.id}`)).body).toMatchObject({
        status: 'active',
        paused_at: null,
        consecutive_failures: 0,
        next_probe_at: null,
      })

      // a backlog before the runner starts: the noisy tenant's own events, and events to everyone
      const emitted: { id: string; at: number }[] = []
      for (let i = 0; i < NOISY_EVENTS; i++) await emit(api, `noisy-${kind}-${i}`, noisy.orgId)
      for (let i = 0; i < 10; i++) emitted.push(await emit(api, `all-${kind}-${i}`, null))
      const backlog = await api.dbh.db('webhook_deliveries').count({ n: '*' })
      expect(Number(backlog[0]?.n)).toBe(DEAD * (NOISY_EVENTS + 10) + 10)

      const runner = buildRunner(kind, api)
      cleanups.push(() => runner.close())
      await runner.start()
      await runner.every(WEBHOOK_JOBS.dispatch, 1_000)
      // the backlog reached the healthy receiver, then one event to everyone every 500 ms, while the
      // noisy tenant's attempts hang
      const arrival = new Map<string, number>()
      const watch = setInterval(() => {
        for (const r of healthy.received) {
          if (!arrival.has(r.headers['webhook-id'])) arrival.set(r.headers['webhook-id'], Date.now())
        }
      }, 20)
      cleanups.push(async () => clearInterval(watch))
      for (let i = 10; i < 30; i++) {
        emitted.push(await emit(api, `all-${kind}-${i}`, null))
        await new Promise((r) => setTimeout(r, 500))
      }
      await until(
        'every event at the healthy receiver',
        async () => emitted.every((e) => arrival.has(e.id)),
        BOUND_MS + 5_000,
      )
      const waits = emitted.map((e) => (arrival.get(e.id) as number) - e.at)
      expect(Math.max(...waits), `waits (ms): ${waits.join(', ')}`).toBeLessThan(BOUND_MS)
      // as a receiver would: each verified with the subscription's secret, each event once
      const wh = new Webhook(hook.body.secret)
      for (const r of healthy.received) {
        const payload = wh.verify(r.body, r.headers) as { id: string }
        expect(payload.id).toBe(r.headers['webhook-id'])
      }
      expect(healthy.deliveredIds('/quiet')).toEqual(new Set(emitted.map((e) => e.id)))
      expect(dead.received.length, 'the noisy receivers were tried meanwhile').toBeGreaterThan(0)

      // the breaker paused every noisy subscription: visible in the GET and the metrics
      const statuses = async () =>
        Promise.all(
          deadHooks.map(async (d) => (await noisyCall('GET', `/v1/webhooks/${d.id}`)).body.status as string),
        )
      await until(
        'every noisy subscription paused',
        async () => (await statuses()).every((s) => s === 'paused'),
        30_000,
      )
      for (const d of deadHooks) {
        const got = await noisyCall('GET', `/v1/webhooks/${d.id}`)
        expect(got.status).toBe(200)
        expect(got.body.status).toBe('paused')
        expect(Date.parse(got.body.paused_at)).toBeGreaterThan(0)
        expect(got.body.consecutive_failures).toBeGreaterThanOrEqual(3)
        expect(Date.parse(got.body.next_probe_at)).toBeGreaterThan(Date.parse(got.body.paused_at))
      }
      const quietNow = await quietCall('GET', `/v1/webhooks/${hook.body.id}`)
      expect(quietNow.body).toMatchObject({ status: 'active', paused_at: null, consecutive_failures: 0 })
      const metrics = await scrape(api.url)
      expect(metrics.value('lsreport_webhook_paused_subscriptions', { org_id: noisy.orgId })).toBe(DEAD)
      expect(metrics.value('lsreport_webhook_paused_subscriptions', { org_id: quiet.orgId })).toBeUndefined()
      expect(metrics.value('lsreport_webhook_subscriptions', { status: 'paused' })).toBe(DEAD)
      expect(metrics.value('lsreport_webhook_subscriptions', { status: 'active' })).toBe(1)
      expect(metrics.value('lsreport_webhook_oldest_pending_seconds')).toBeLessThan(BOUND_MS / 1000)

      // paused: the deliveries wait (pending, none failed); only a probe per subscription now and then
      const noisyDeliveries = () =>
        api.dbh
          .db('webhook_deliveries')
          .whereIn(
            'webhook_id',
            deadHooks.map((d) => d.id),
          )
          .select('status', 'attempts')
      expect((await noisyDeliveries()).filter((d) => d.status !== 'pending')).toEqual([])
      const triedBefore = dead.received.length
      await new Promise((r) => setTimeout(r, 3_000))
      expect(
        dead.received.length - triedBefore,
        'at most a probe per paused subscription',
      ).toBeLessThanOrEqual(DEAD)
      // the same 404 for another organization's webhook
      const foreign = await quietCall('POST', `/v1/webhooks/${deadHooks[0]!.id}/resume`)
      expect(foreign.status).toBe(404)
      expect(foreign.body).toEqual({ message: `webhook "${deadHooks[0]!.id}" not found`, status: 'IR3600' })

      // the receiver is back: its owner resumes one subscription, the probes resume the others
      dead.behave(() => 200)
      const resumed = await noisyCall('POST', `/v1/webhooks/${deadHooks[0]!.id}/resume`)
      expect(resumed.status).toBe(200)
      expect(resumed.body).toMatchObject({ status: 'active', paused_at: null, consecutive_failures: 0 })
      await until(
        'every noisy delivery succeeded',
        async () => (await noisyDeliveries()).every((d) => d.status === 'succeeded'),
        60_000,
      )
      expect(await statuses()).toEqual(deadHooks.map(() => 'active'))
      for (const [i, d] of deadHooks.entries()) {
        const got = dead.received.filter((r) => r.path === `/dead-${i}` && r.answered === 200)
        const ids = new Set(got.map((r) => r.headers['webhook-id']))
        expect(ids.size).toBe(NOISY_EVENTS + emitted.length)
        for (const r of got) new Webhook(d.secret).verify(r.body, r.headers)
      }
      const cleared = await scrape(api.url)
      expect(cleared.value('lsreport_webhook_subscriptions', { status: 'paused' })).toBe(0)
      expect(cleared.find('lsreport_webhook_paused_subscriptions')).toEqual([])
    },
    180_000,
  )
})

describe.runIf(pgOk)('the webhook circuit breaker (repository)', () => {
  test('behavior: pauses after K failures in a row lasting minMs, not before; a success resets the count; a paused subscription claims only its probe; failed probes double the wait; a resume sends the waiting deliveries with the pause left out of their retry window', async () => {
    const dbh = await migratedTestDatabase()
    try {
      const repos = createRepos(dbh.db)
      const org = await repos.orgs.create({ name: 'breaker', canAllowlist: true })
      const hook = await repos.webhooks.create({
        id: randomUUID(),
        orgId: org.id,
        url: 'http://127.0.0.1:9/x',
        events: ['day.finalized'],
        description: null,
        secret: 'sealed',
        limit: 25,
      })
      const policy: BreakerPolicy = { failures: 3, minMs: 0, probeMs: 1_000, maxProbeMs: 3_600_000 }
      const fail = (p: BreakerPolicy = policy, probe = false) =>
        repos.webhooks.countOutcome(hook.id, false, p, probe)
      const row = async () => (await repos.webhooks.get(org.id, hook.id))!

      // a long minMs: three failures in a row in a few milliseconds do not pause
      for (let i = 0; i < 3; i++) expect((await fail({ ...policy, minMs: 60_000 })).tripped).toBe(false)
      expect(await row()).toMatchObject({ consecutive_failures: 3, paused_at: null })
      // a success resets the count
      expect(await repos.webhooks.countOutcome(hook.id, true, policy, false)).toMatchObject({
        resumed: false,
        consecutiveFailures: 0,
      })
      expect(await row()).toMatchObject({ consecutive_failures: 0, failing_since: null })
      expect((await fail()).tripped).toBe(false)
      expect((await fail()).tripped).toBe(false)
      expect(await fail()).toMatchObject({ tripped: true, consecutiveFailures: 3 })
      const paused = await row()
      expect(paused.paused_at).not.toBeNull()
      expect(paused.next_probe_at!.getTime() - paused.paused_at!.getTime()).toBe(1_000)
      // a late failure of an attempt sent before the pause does not trip again
      expect((await fail()).tripped).toBe(false)

      // its deliveries wait: only the probe is claimed
      await repos.webhooks.emit({ type: 'day.finalized', factKey: 'breaker:1', orgId: null, data: {} })
      const delivery = await dbh.db('webhook_deliveries').where({ webhook_id: hook.id }).first()
      await dbh
        .db('webhook_deliveries')
        .where({ id: delivery.id })
        .update({
          window_started_at: dbh.db.raw(`now() - interval '1 hour'`),
        })
      expect(await repos.webhooks.due(20, 100)).toEqual([])
      expect(await repos.webhooks.claim(delivery.id, 0, 60_000)).toBeUndefined()
      expect(await repos.webhooks.takeProbes(10, 5_000), 'no probe before next_probe_at').toEqual([])
      await dbh
        .db('webhooks')
        .where({ id: hook.id })
        .update({ next_probe_at: dbh.db.raw('now()') })
      const probes = await repos.webhooks.takeProbes(10, 5_000)
      expect(probes).toEqual([{ id: delivery.id, attempts: 0, webhook_id: hook.id, org_id: org.id }])
      expect(await repos.webhooks.takeProbes(10, 5_000), 'leased: not taken twice').toEqual([])
      const probe = await repos.webhooks.claim(delivery.id, 0, 60_000, { probe: true })
      expect(probe?.paused_at).not.toBeNull()
      // failed probes: the next one 2 s, then 4 s later
      for (const wait of [2_000, 4_000]) {
        await fail(policy, true)
        const r = await row()
        const ahead = r.next_probe_at!.getTime() - Date.now()
        expect(ahead).toBeGreaterThan(wait - 1_500)
        expect(ahead).toBeLessThanOrEqual(wait + 500)
      }
      expect((await row()).probes).toBe(2)

      // resumed by its owner (another organization cannot): the delivery is due now, its window moved by the pause
      const other = await repos.orgs.create({ name: 'other', canAllowlist: true })
      expect(await repos.webhooks.resume(other.id, hook.id)).toBeUndefined()
      await dbh
        .db('webhooks')
        .where({ id: hook.id })
        .update({
          paused_at: dbh.db.raw(`now() - interval '10 minutes'`),
        })
      const resumed = await repos.webhooks.resume(org.id, hook.id)
      expect(resumed).toMatchObject({
        was_paused: true,
        paused_at: null,
        next_probe_at: null,
        consecutive_failures: 0,
        probes: 0,
      })
      const after = await dbh.db('webhook_deliveries').where({ id: delivery.id }).first()
      // it started an hour ago, ten minutes of which paused
      const shift = after.window_started_at.getTime() - (Date.now() - 3_600_000)
      expect(Math.abs(shift - 10 * 60_000)).toBeLessThan(60_000)
      expect(after.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now() + 1_000)
      expect((await repos.webhooks.due(20, 100)).map((d) => d.id)).toEqual([delivery.id])
    } finally {
      await dbh.close()
    }
  })
})
