import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createOrg } from '../cli/admin.ts'
import { createLogger } from '../common/logger.ts'
import type { DbHandle } from '../db/index.ts'
import { type DevnetHandle, startDevnet } from '../devnet/index.ts'
import { createBullRunner, createInlineRunner, type JobRunner, UnrecoverableError } from '../jobs/runner.ts'
import { instrumentProcessors, SCRAPE_TIMEOUT_MS } from '../metrics/index.ts'
import { postHalfABodyAndClose } from './helpers/abort.ts'
import { http, orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { syncAndCompute, syncOnly } from './helpers/days.ts'
import { type Exposition, scrape } from './helpers/prometheus.ts'
import { migratedTestDatabase, postgresAvailable, REDIS_URL, redisAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const redisOk = await redisAvailable()
const silent = createLogger({ level: 'silent' })

const LATENCY = 'lsreport_http_request_duration_seconds_count'
const count = (m: Exposition, labels: Record<string, string>) => m.value(LATENCY, labels) ?? 0

/** Processors that succeed (`ok`) or fail for good (`boom`). */
const processors = {
  ok: async () => ({ done: true }),
  boom: async () => {
    throw new UnrecoverableError('boom')
  },
}

describe.runIf(pgOk && redisOk)('metrics over HTTP (Postgres, BullMQ on Redis, devnet)', () => {
  let devnet: DevnetHandle
  let dataDir: string
  let dbh: DbHandle
  let api: TestApi
  const prefix = `metrics${randomBytes(4).toString('hex')}`

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-metrics-'))
    devnet = await startDevnet({
      dataDir,
      days: 3,
      walletCount: 12,
      startDate: '2026-05-01',
      dayIntervalMs: 0,
      blockIntervalMs: 100,
      history: 'current',
    })
    dbh = await migratedTestDatabase()
    api = await startTestApi(
      'postgres',
      { RPC_URL: devnet.rpcUrl, CHAIN: 'devnet', REDIS_URL, QUEUE_PREFIX: prefix },
      { dbh },
    )
  }, 120_000)
  afterAll(async () => {
    await api?.close()
    await dbh?.close()
    await devnet?.stop()
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true })
  })

  test('behavior: API latency histograms count requests by route template, method and status class', async () => {
    const before = await scrape(api.url)
    const call = http(api.url)
    for (let i = 0; i < 3; i++) expect((await call('GET', '/health')).status).toBe(200)
    expect((await call('GET', '/v0/platform/accounts/some-account-key')).status).toBe(401)
    expect((await call('GET', '/no-such-route-4711')).status).toBe(404)
    const after = await scrape(api.url)

    expect(after.types.get('lsreport_http_request_duration_seconds')).toBe('histogram')
    const health = { route: '/health', method: 'GET', status_class: '2xx' }
    expect(count(after, health) - count(before, health)).toBe(3)
    const account = { route: '/v0/platform/accounts/:idOrKey', method: 'GET', status_class: '4xx' }
    expect(count(after, account) - count(before, account)).toBe(1)
    const unmatched = { route: 'unmatched', method: 'GET', status_class: '4xx' }
    expect(count(after, unmatched) - count(before, unmatched)).toBe(1)
    // label values are templates: no raw URL becomes a series
    const routes = new Set(after.find(LATENCY).map((s) => s.labels.route))
    expect([...routes].some((r) => r?.includes('some-account-key') || r?.includes('4711'))).toBe(false)
    // the +Inf bucket holds every observation
    expect(after.value('lsreport_http_request_duration_seconds_bucket', { ...health, le: '+Inf' })).toBe(
      count(after, health),
    )
  })

  test('behavior: a request whose client closes the connection before its answer is counted as aborted', async () => {
    const aborted = { route: '/v0/platform/accounts', method: 'POST' }
    const before = (await scrape(api.url)).value('lsreport_http_requests_aborted_total', aborted) ?? 0
    const { token } = await orgWithToken(api)
    await postHalfABodyAndClose(api.url, '/v0/platform/accounts', { authorization: `Bearer ${token}` })
    let after = before
    for (let i = 0; i < 50 && after === before; i++) {
      await new Promise((r) => setTimeout(r, 20))
      after = (await scrape(api.url)).value('lsreport_http_requests_aborted_total', aborted) ?? 0
    }
    expect(after - before).toBe(1)
    // it has no latency observation: it was never answered
    expect(count(await scrape(api.url), { ...aborted, status_class: '2xx' })).toBe(0)
  })

  test('behavior: follower lag grows when the chain advances without a sync and returns to 0 after one', async () => {
    const chain = { chain_id: String(devnet.chainId) }
    await syncOnly(dbh.db, devnet)
    const synced = await scrape(api.url)
    expect(synced.value('lsreport_metrics_source_up', { source: 'follower' })).toBe(1)
    expect(synced.value('lsreport_metrics_source_up', { source: 'rpc' })).toBe(1)
    expect(synced.value('lsreport_follower_lag_blocks', chain)).toBe(0)
    const head = synced.value('lsreport_chain_head_block', chain)
    expect(head).toBeGreaterThan(0)
    expect(synced.value('lsreport_follower_synced_block', chain)).toBe(head)
    expect(synced.value('lsreport_follower_last_seen_seconds', chain)).toBeLessThan(60)

    await devnet.simulator.runDays(1)
    const behind = await scrape(api.url)
    const lag = behind.value('lsreport_follower_lag_blocks', chain)
    expect(lag).toBeGreaterThan(0)
    expect(behind.value('lsreport_chain_head_block', chain)).toBe((head ?? 0) + (lag ?? 0))
    expect(behind.value('lsreport_follower_synced_block', chain)).toBe(head)

    await syncOnly(dbh.db, devnet)
    const caughtUp = await scrape(api.url)
    expect(caughtUp.value('lsreport_follower_lag_blocks', chain)).toBe(0)
    expect(caughtUp.value('lsreport_follower_synced_block', chain)).toBe((head ?? 0) + (lag ?? 0))
  })

  test('behavior: computing the days moves the day metrics', async () => {
    const chain = { chain_id: String(devnet.chainId) }
    await syncOnly(dbh.db, devnet)
    const before = await scrape(api.url)
    expect(before.value('lsreport_metrics_source_up', { source: 'days' })).toBe(1)
    expect(before.value('lsreport_days', { ...chain, status: 'computed' })).toBeUndefined()
    expect(before.value('lsreport_day_last_duration_seconds', chain)).toBeUndefined()

    await syncAndCompute(dbh.db, devnet)
    const after = await scrape(api.url)
    const days = await dbh.db('days').where({ chain_id: devnet.chainId }).select('report_epoch', 'wallets')
    expect(days.length).toBeGreaterThanOrEqual(4)
    expect(after.value('lsreport_days', { ...chain, status: 'computed' })).toBe(days.length)
    const last = days.reduce((a, b) => (BigInt(a.report_epoch) > BigInt(b.report_epoch) ? a : b))
    expect(after.value('lsreport_day_last_report_epoch', chain)).toBe(Number(last.report_epoch))
    expect(after.value('lsreport_day_last_wallets', chain)).toBe(last.wallets)
    expect(after.value('lsreport_day_last_duration_seconds', chain)).toBeGreaterThan(0)
    expect(after.value('lsreport_day_last_wallets_per_second', chain)).toBeGreaterThan(0)
    expect(after.value('lsreport_day_recent_wallets_per_second', chain)).toBeGreaterThan(0)
    expect(after.value('lsreport_day_last_computed_timestamp_seconds', chain)).toBeGreaterThan(
      Date.now() / 1000 - 120,
    )
  })

  test('behavior: queue depth and failures are BullMQ counts on Redis, whichever process runs the jobs', async () => {
    const runner: JobRunner = createBullRunner(processors, { redisUrl: REDIS_URL, prefix, logger: silent })
    try {
      for (let i = 0; i < 3; i++) await runner.enqueue('ok', {}, { jobId: `ok-${i}` })
      await runner.enqueue('ok', {}, { jobId: 'later', delayMs: 600_000 })
      const queued = await scrape(api.url)
      expect(queued.value('lsreport_metrics_source_up', { source: 'queue' })).toBe(1)
      expect(queued.value('lsreport_queue_jobs', { state: 'waiting' })).toBe(3)
      expect(queued.value('lsreport_queue_jobs', { state: 'delayed' })).toBe(1)
      expect(queued.value('lsreport_queue_jobs', { state: 'failed' })).toBe(0)

      await runner.start()
      await runner.enqueue('boom', {}, { jobId: 'boom-1', attempts: 1 })
      await runner.idle(20_000)
      const ran = await scrape(api.url)
      expect(ran.value('lsreport_queue_jobs', { state: 'waiting' })).toBe(0)
      expect(ran.value('lsreport_queue_jobs', { state: 'delayed' })).toBe(1)
      expect(ran.value('lsreport_queue_jobs', { state: 'failed' })).toBe(1)
    } finally {
      await runner.close()
    }
  })

  test('behavior: webhook delivery outcomes are counted by status from the deliveries table', async () => {
    const before = await scrape(api.url)
    expect(before.value('lsreport_metrics_source_up', { source: 'webhooks' })).toBe(1)
    expect(before.value('lsreport_webhook_deliveries', { status: 'failed' })).toBe(0)
    const org = await createOrg(dbh.db, { name: 'Metrics Org', canAllowlist: false })
    const webhook = randomUUID()
    await dbh.db('webhooks').insert({
      id: webhook,
      org_id: org.id,
      url: 'https://receiver.example/hook',
      events: ['day.finalized'],
      secret: `whsec_${randomBytes(24).toString('base64')}`,
    })
    const statuses = ['pending', 'succeeded', 'succeeded', 'failed']
    for (const [i, status] of statuses.entries()) {
      await dbh.db('webhook_events').insert({
        id: `evt_metrics_${i}`,
        fact_key: `metrics-test:${i}`,
        type: 'day.finalized',
        body: '{}',
      })
      await dbh.db('webhook_deliveries').insert({
        id: randomUUID(),
        event_id: `evt_metrics_${i}`,
        webhook_id: webhook,
        status,
        created_at: new Date(Date.now() - 30_000),
      })
    }
    const after = await scrape(api.url)
    expect(after.value('lsreport_webhook_deliveries', { status: 'pending' })).toBe(1)
    expect(after.value('lsreport_webhook_deliveries', { status: 'succeeded' })).toBe(2)
    expect(after.value('lsreport_webhook_deliveries', { status: 'failed' })).toBe(1)
    expect(after.value('lsreport_webhook_oldest_pending_seconds')).toBeGreaterThanOrEqual(29)
  })

  test('behavior: a source blocked in the database is left out after the timeout; the scrape still answers', async () => {
    const locker = await dbh.db.client.acquireConnection()
    try {
      await locker.query('begin')
      await locker.query('lock table days in access exclusive mode')
      const started = Date.now()
      const m = await scrape(api.url)
      const took = Date.now() - started
      expect(took).toBeGreaterThanOrEqual(SCRAPE_TIMEOUT_MS - 100)
      expect(took).toBeLessThan(SCRAPE_TIMEOUT_MS + 3_000)
      expect(m.value('lsreport_metrics_source_up', { source: 'days' })).toBe(0)
      expect(m.find('lsreport_days')).toEqual([])
      expect(m.value('lsreport_metrics_source_up', { source: 'follower' })).toBe(1)
      expect(m.value('lsreport_follower_lag_blocks', { chain_id: String(devnet.chainId) })).toBe(0)
    } finally {
      await locker.query('rollback')
      await dbh.db.client.releaseConnection(locker)
    }
    const again = await scrape(api.url)
    expect(again.value('lsreport_metrics_source_up', { source: 'days' })).toBe(1)
  })

  test('behavior: /metrics is absent from the OpenAPI document and public without METRICS_TOKEN', async () => {
    const doc = (await http(api.url)('GET', '/docs/json')).body as { paths: Record<string, unknown> }
    expect(Object.keys(doc.paths)).toContain('/health')
    expect(Object.keys(doc.paths)).not.toContain('/metrics')
    const res = await fetch(`${api.url}/metrics`)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('# TYPE lsreport_follower_lag_blocks gauge')
  })

  test('behavior: every metric the example Grafana dashboard queries is served', async () => {
    const dashboard = await fs.readFile(
      path.resolve(import.meta.dirname, '../docs/grafana-dashboard.json'),
      'utf8',
    )
    const exprs = (JSON.parse(dashboard) as { panels: { targets?: { expr: string }[] }[] }).panels.flatMap(
      (p) => (p.targets ?? []).map((t) => t.expr),
    )
    const used = new Set(exprs.flatMap((e) => [...e.matchAll(/lsreport_[a-z0-9_]+/g)].map((m) => m[0])))
    expect(used.size).toBeGreaterThanOrEqual(10)
    const served = (await scrape(api.url)).types
    const family = (name: string) => name.replace(/_(bucket|count|sum)$/, '')
    expect([...used].filter((name) => !served.has(name) && !served.has(family(name)))).toEqual([])
  })
})

describe('metrics in the embedded mode (PGlite, inline runner, METRICS_TOKEN)', () => {
  const token = `mt-${randomBytes(16).toString('hex')}`
  let api: TestApi
  let runner: JobRunner | undefined
  beforeAll(async () => {
    api = await startTestApi('pglite', { METRICS_TOKEN: token })
  }, 60_000)
  afterAll(async () => {
    await runner?.close()
    await api?.close()
  })

  test('behavior: a scrape needs the bearer METRICS_TOKEN; inline queue counts and job durations move', async () => {
    const call = http(api.url)
    const missing = await call('GET', '/metrics')
    expect(missing.status).toBe(401)
    expect(missing.body).toMatchObject({ status: 'IR2000' })
    const wrong = await call('GET', '/metrics', undefined, { authorization: 'Bearer not-the-token' })
    expect(wrong.status).toBe(401)
    expect(wrong.body).toMatchObject({ status: 'IR2001' })

    const empty = await scrape(api.url, token)
    expect(empty.value('lsreport_metrics_source_up', { source: 'days' })).toBe(1)
    expect(empty.value('lsreport_metrics_source_up', { source: 'follower' })).toBe(1)
    expect(empty.find('lsreport_days')).toEqual([])
    expect(empty.find('lsreport_queue_jobs')).toEqual([])
    expect(empty.value('lsreport_process_resident_memory_bytes')).toBeGreaterThan(0)

    // the embedded start binds its inline runner, whose processors are instrumented (cli/up.ts)
    runner = createInlineRunner(instrumentProcessors(processors, api.app.metrics), silent)
    api.app.metrics.useQueue(runner)
    await runner.enqueue('ok', {}, { jobId: 'later', delayMs: 600_000 })
    await runner.enqueue('ok', {}, { jobId: 'now' })
    const queued = await scrape(api.url, token)
    expect(queued.value('lsreport_queue_jobs', { state: 'waiting' })).toBe(1)
    expect(queued.value('lsreport_queue_jobs', { state: 'delayed' })).toBe(1)

    await runner.start()
    await runner.enqueue('boom', {}, { jobId: 'boom-1', attempts: 1 })
    await runner.enqueue('ok', {}, { jobId: 'now-2' })
    await runner.idle(10_000)
    const ran = await scrape(api.url, token)
    expect(ran.value('lsreport_queue_jobs', { state: 'waiting' })).toBe(0)
    expect(ran.value('lsreport_queue_jobs', { state: 'failed' })).toBe(1)
    const jobs = 'lsreport_job_duration_seconds_count'
    expect(ran.value(jobs, { job: 'ok', outcome: 'succeeded' })).toBe(2)
    expect(ran.value(jobs, { job: 'boom', outcome: 'failed' })).toBe(1)
  })
})
