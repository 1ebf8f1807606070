/**
 * One measured step of bench/day.ts, in a process of its own (so its peak RSS is its own). The parent
 * samples this process's RSS from /proc between the `start` and `end` messages sent over IPC, and gets
 * the figures in a `result` message.
 *
 *   node --import tsx bench/day-worker.ts seed '{"url":"postgres://...","holders":100000,"reports":2}'
 *   node --import tsx bench/day-worker.ts days '{"url":"postgres://...","upTo":2}'
 *   node --import tsx bench/day-worker.ts days '{"url":"postgres://...","upTo":31,"backfill":true}'
 *   node --import tsx bench/day-worker.ts days '{"url":"postgres://...","upTo":3,"from":3,"workers":2}'
 *   node --import tsx bench/day-worker.ts embedded '{"holders":100000}'
 *
 * - seed: writes the synthetic history (test/helpers/synthetic-history.ts) with the cursor at report 1, then
 *   computes day 1 with the real scheduler and processors (the chain's first day: no predecessor).
 * - days: moves the cursor to report `upTo` and runs the day pipeline (test/helpers/rewards-day.ts's
 *   `syntheticDayRunner`: createDayJobs on the inline runner, started by one `days` scheduling job) until
 *   every day is computed: one day, or (`backfill`, prepared by `startBackfill` as `lsreport backfill`
 *   does) reports 2 .. upTo. With `workers`, on BullMQ instead: this process and workers - 1 more
 *   (`bull-worker` mode), each a worker of concurrency 1 on one queue.
 * - embedded: PGlite in memory with the API in the same process (`npm start`'s mode): the API's latency
 *   (autocannon in a child process, bench/load-client.ts) idle and while a day computes.
 */
import { fork } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import { buildApp } from '../api/app.ts'
import { openSigningKeys } from '../api/auth/signing-keys.ts'
import { createClient, createOrg } from '../cli/admin.ts'
import { loadConfig } from '../common/config.ts'
import { createLogger } from '../common/logger.ts'
import { type Db, migrate, openDb } from '../db/index.ts'
import { computeWalletRecord, prepareReport } from '../engine/index.ts'
import { syntheticReport, syntheticWallets } from '../fixtures/engine/synthetic.ts'
import { startBackfill } from '../jobs/days/backfill.ts'
import { DAY_JOBS } from '../jobs/days/index.ts'
import { createBullRunner, type JobRunner, type Processor } from '../jobs/runner.ts'
import { createPlatformService } from '../platform/service.ts'
import { syntheticDayRunner } from '../test/helpers/rewards-day.ts'
import { BENCH_CHAIN_ID, reportInfo, setCursor, writeHistory } from '../test/helpers/synthetic-history.ts'
import { gcPauses, traceConnectionHolds } from './connection-holds.ts'
import { startLoad, UNREACHED_RATE_LIMIT } from './load-client.ts'
import { applyServiceV8Flags } from './v8-flags.ts'

const [mode, rawArgs] = process.argv.slice(2)
const args = JSON.parse(rawArgs ?? '{}') as {
  url?: string
  holders?: number
  reports?: number
  upTo?: number
  /** the first day the result reports (default 2) */
  from?: number
  /** run on BullMQ with this many worker processes (0: the inline runner) */
  workers?: number
  backfill?: boolean
  seconds?: number
  connections?: number
}
const send = (message: unknown) =>
  new Promise<void>((resolve, reject) =>
    process.send ? process.send(message, (err: Error | null) => (err ? reject(err) : resolve())) : resolve(),
  )
const logger = createLogger({ level: process.env.BENCH_LOG_LEVEL ?? 'silent', destination: 2 })

/** Where the BullMQ variant runs: Redis and a queue prefix of this run's own. */
interface BullOptions {
  redisUrl: string
  prefix: string
}

/** The day pipeline's processors on the inline runner (or BullMQ), each timed by job name. */
function dayPipeline(db: Db, bull?: BullOptions) {
  const jobMs: Record<string, { jobs: number; ms: number }> = {}
  const timed =
    (name: string, processor: Processor): Processor =>
    async (job) => {
      const started = performance.now()
      try {
        return await processor(job)
      } finally {
        const entry = jobMs[name] ?? { jobs: 0, ms: 0 }
        entry.jobs += 1
        entry.ms += performance.now() - started
        jobMs[name] = entry
      }
    }
  const runner = syntheticDayRunner(db, {
    logger,
    wrap: timed,
    ...(bull
      ? {
          makeRunner: (processors: Record<string, Processor>) =>
            createBullRunner(processors, {
              redisUrl: bull.redisUrl,
              prefix: bull.prefix,
              concurrency: 1,
              logger,
            }),
        }
      : {}),
  })
  return { runner, jobMs }
}

/** What a query reads or writes, for the time breakdown (the knex queries of the pipeline). */
function queryLabel(sql: string): string {
  if (sql.includes('from "wallet_records"') && sql.startsWith('select "address"'))
    return 'read previous totals'
  if (sql.includes('from lseth_transfers t')) return 'read period transfers'
  if (sql.includes('from "wallets"') || sql.includes('from wallets w')) return 'read attributions'
  if (sql.includes('from "discount_rates"')) return 'read discount targets'
  if (sql.startsWith('insert into "day_shards"')) return 'save shard'
  if (sql.startsWith('insert into "wallet_records"'))
    return 'write wallet records (move from the stage, PGlite)'
  if (/^copy lsreport_stage_/.test(sql)) return 'write wallet records (COPY into the stage, PGlite)'
  if (sql.startsWith('fetch forward')) return 'read previous totals (PGlite cursor)'
  if (sql.startsWith('delete from wallet_records')) return 'delete a shard before writing it'
  if (sql.startsWith('insert into account_records')) return 'finalize: account records'
  if (sql.startsWith('with d0 as (delete from account_records')) return 'finalize: day-level records'
  if (/^(delete|update|insert|select).*"(protocol_records|fee_records|operator_fee_records)"/.test(sql)) {
    return 'finalize: other records'
  }
  return 'bookkeeping (days, reports, fee schedules, ...)'
}

/** Wall time of the pipeline's knex queries, by label (the COPY itself goes around knex: not counted). */
function timeQueries(db: Db) {
  const open = new Map<string, { label: string; started: number }>()
  const totals: Record<string, { queries: number; ms: number; max_ms: number }> = {}
  const done = (q: { __knexQueryUid?: string }) => {
    const entry = q.__knexQueryUid ? open.get(q.__knexQueryUid) : undefined
    if (!entry || !q.__knexQueryUid) return
    open.delete(q.__knexQueryUid)
    const total = totals[entry.label] ?? { queries: 0, ms: 0, max_ms: 0 }
    const ms = performance.now() - entry.started
    total.queries += 1
    total.ms += ms
    total.max_ms = Math.max(total.max_ms, Math.round(ms))
    totals[entry.label] = total
  }
  db.on('query', (q: { __knexQueryUid?: string; sql: string }) => {
    if (q.__knexQueryUid) open.set(q.__knexQueryUid, { label: queryLabel(q.sql), started: performance.now() })
  })
  db.on('query-response', (_r: unknown, q: { __knexQueryUid?: string }) => done(q))
  db.on('query-error', (_e: unknown, q: { __knexQueryUid?: string }) => done(q))
  return totals
}

/** Runs the engine on synthetic wallets for a moment, so the measured day does not pay for the JIT. */
function warmUp() {
  const ctx = prepareReport(syntheticReport())
  for (const wallet of syntheticWallets(20_000, 7)) computeWalletRecord(ctx, wallet)
}

/** Runs every day the cursor allows (one scheduling job starts them; each finished day starts the next). */
async function runDays(db: Db, runner: JobRunner, label: string) {
  const cpu = process.cpuUsage()
  const elu = performance.eventLoopUtilization()
  const started = performance.now()
  await runner.enqueue(DAY_JOBS.schedule, {}, { jobId: `bench-${label}` })
  await runner.idle(6 * 60 * 60_000)
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const loop = performance.eventLoopUtilization(elu)
  const failed = await runner.failed()
  const days: {
    date: string
    status: string
    wallets: number
    shards: number
    duration_ms: number
    error: string | null
    content_hash: string | null
  }[] = await db('days')
    .select(
      db.raw("to_char(date, 'YYYY-MM-DD') as date"),
      'status',
      'wallets',
      'shards',
      'duration_ms',
      'error',
      'content_hash',
    )
    .where({ chain_id: BENCH_CHAIN_ID })
    .orderBy('block_number')
  if (failed.length > 0 || days.some((d) => d.status !== 'computed')) {
    throw new Error(
      `day pipeline failed: ${JSON.stringify({ failed, days: days.filter((d) => d.status !== 'computed') })}`,
    )
  }
  return {
    seconds,
    node_cpu_seconds: (used.user + used.system) / 1e6,
    event_loop_utilization: Number(loop.utilization.toFixed(3)),
    load_average: os.loadavg().map((l) => Number(l.toFixed(2))),
    days,
  }
}

async function shardStats(db: Db, fromEpoch: string) {
  const [row] = await db('day_shards')
    .select(
      db.raw('count(*)::int as shards'),
      db.raw('coalesce(sum(duration_ms), 0)::int as shard_ms'),
      db.raw('coalesce(max(duration_ms), 0)::int as max_shard_ms'),
    )
    .where({ chain_id: BENCH_CHAIN_ID })
    .where('report_epoch', '>=', fromEpoch)
  return row as { shards: number; shard_ms: number; max_shard_ms: number }
}

async function seed() {
  const dbh = await openDb({ databaseUrl: args.url, poolMax: 10 })
  try {
    const started = performance.now()
    const history = await writeHistory(
      dbh.db,
      { holders: args.holders ?? 10_000, reports: args.reports ?? 2 },
      1,
    )
    await dbh.db.raw('analyze')
    const historySeconds = (performance.now() - started) / 1000
    const { runner, jobMs } = dayPipeline(dbh.db)
    await runner.start()
    await send({ type: 'start' })
    const run = await runDays(dbh.db, runner, 'first')
    await send({ type: 'end' })
    await runner.close()
    await send({
      type: 'result',
      history: { ...history, seconds: historySeconds },
      first_day: { ...run, jobs: jobMs, max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024) },
    })
  } finally {
    await dbh.close()
  }
}

/** Deletes the Redis keys of a BullMQ prefix (the benchmark's own queue). */
async function dropQueue(bull: BullOptions) {
  const redis = new Redis(bull.redisUrl)
  try {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${bull.prefix}:*`, 'COUNT', 1000)
      if (keys.length > 0) await redis.del(...keys)
      cursor = next
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
}

/** More BullMQ worker processes on the same queue (`bull-worker` mode), with their RSS sampled. */
async function startHelpers(count: number, bull: BullOptions) {
  const helpers = Array.from({ length: count }, () =>
    fork(import.meta.filename, ['bull-worker', JSON.stringify({ url: args.url, ...bull })], {
      execArgv: process.execArgv,
    }),
  )
  await Promise.all(helpers.map((h) => new Promise((resolve) => h.once('message', resolve))))
  let peak = 0
  const timer = setInterval(() => {
    let sum = 0
    for (const h of helpers) {
      try {
        sum += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${h.pid}/status`, 'utf8'))?.[1] ?? 0)
      } catch {
        // exited
      }
    }
    peak = Math.max(peak, sum / 1024)
  }, 50)
  return {
    /** Ends them at once (after a failure). */
    kill() {
      clearInterval(timer)
      for (const h of helpers) h.kill()
    },
    /** Stops them; returns their CPU seconds and the peak of their summed RSS. */
    async stop() {
      clearInterval(timer)
      const cpu = await Promise.all(
        helpers.map(
          (h) =>
            new Promise<number>((resolve) => {
              h.once('message', (m: { cpu_seconds: number }) => resolve(m.cpu_seconds))
              h.send('stop')
            }),
        ),
      )
      return { cpu_seconds: cpu.reduce((a, b) => a + b, 0), peak_rss_mb: Math.round(peak) }
    },
  }
}

/** A BullMQ worker process of the `days --workers N` variant: runs day jobs until told to stop. */
async function bullWorker() {
  const bull = args as unknown as BullOptions
  const dbh = await openDb({ databaseUrl: args.url, poolMax: 10 })
  const { runner } = dayPipeline(dbh.db, bull)
  await runner.start()
  warmUp()
  const cpu = process.cpuUsage()
  await send({ type: 'ready' })
  await new Promise((resolve) => process.once('message', resolve))
  const used = process.cpuUsage(cpu)
  await runner.close()
  await dbh.close()
  await send({ cpu_seconds: (used.user + used.system) / 1e6 })
}

async function days() {
  const dbh = await openDb({ databaseUrl: args.url, poolMax: 10 })
  const workers = args.workers ?? 0
  const bull: BullOptions | undefined =
    workers > 0
      ? { redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', prefix: `bench-day-${process.pid}` }
      : undefined
  let helpers: Awaited<ReturnType<typeof startHelpers>> | undefined
  try {
    helpers = bull && workers > 1 ? await startHelpers(workers - 1, bull) : undefined
    const { runner, jobMs } = dayPipeline(dbh.db, bull)
    await runner.start()
    await setCursor(dbh.db, reportInfo(args.upTo ?? 2).block)
    if (args.backfill) {
      // as `lsreport backfill --from --to` prepares its range; the day jobs then compute it in chain order
      await startBackfill(dbh.db, BENCH_CHAIN_ID, {
        from: reportInfo(2).date,
        to: reportInfo(args.upTo ?? 2).date,
        recompute: false,
      })
    }
    warmUp()
    const queries = timeQueries(dbh.db)
    const baseline = Math.round(process.memoryUsage.rss() / 2 ** 20)
    await send({ type: 'start' })
    const run = await runDays(dbh.db, runner, `up-to-${args.upTo}`)
    await send({ type: 'end' })
    const others = await helpers?.stop()
    await runner.close()
    const computed = run.days.slice(args.from ? args.from - 1 : 1)
    await send({
      type: 'result',
      ...run,
      days: computed,
      wallets: computed.reduce((n, d) => n + d.wallets, 0),
      jobs: jobMs,
      queries: { ...queries },
      shards: await shardStats(dbh.db, reportInfo(args.from ?? 2).epoch),
      runner: bull ? `bullmq, ${workers} worker process(es), concurrency 1` : 'inline',
      ...(others ? { other_workers: others } : {}),
      baseline_rss_mb: baseline,
      max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    })
  } finally {
    helpers?.kill()
    if (bull) await dropQueue(bull)
    await dbh.close()
  }
}

async function embedded() {
  // the embedded case serves the API as `lsreport up` does
  applyServiceV8Flags()
  const holders = args.holders ?? 100_000
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-bench-day-'))
  const dbh = await openDb({})
  try {
    await migrate(dbh.db)
    const started = performance.now()
    const history = await writeHistory(dbh.db, { holders, reports: 3 }, 1)
    const historySeconds = (performance.now() - started) / 1000
    const { runner, jobMs } = dayPipeline(dbh.db)
    await runner.start()
    const firstDay = await runDays(dbh.db, runner, 'first')

    const port = 19_000 + Math.floor(Math.random() * 1000)
    const config = loadConfig({
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'silent',
      ...UNREACHED_RATE_LIMIT,
    })
    const silent = createLogger({ level: 'silent' })
    const signingKeys = await openSigningKeys({ db: dbh.db, config, logger: silent })
    const app = await buildApp({ config, logger: silent, db: dbh.db, signingKeys })
    await app.listen({ host: '127.0.0.1', port })
    const base = `http://127.0.0.1:${port}`
    const org = await createOrg(dbh.db, { name: 'bench', canAllowlist: true })
    const client = await createClient(dbh.db, { orgId: org.id, scopes: 'read:platform write:platform' })
    const platform = createPlatformService(dbh.db)
    await platform.createAccount(org.id, 'omnibus', 'bench')
    const address = '0x00000000000000000000000000000000000be000'
    await platform.createWallet(
      { id: org.id, can_allowlist: true },
      'omnibus',
      { address, type: 'ETH', allowlisted: true },
      'bench',
    )
    const token = (await (
      await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          audience: base,
          client_id: client.client_id,
          client_secret: client.client_secret,
        }),
      })
    ).json()) as { access_token: string }
    const targets: Record<string, { url: string; headers?: Record<string, string> }> = {
      health: { url: `${base}/health` },
      wallet_read: {
        url: `${base}/v0/platform/wallets/${address}`,
        headers: { authorization: `Bearer ${token.access_token}` },
      },
    }
    const idleSeconds = args.seconds ?? 5
    const connections = args.connections ?? 10
    const latency: Record<string, unknown> = {}
    for (const [name, target] of Object.entries(targets)) {
      const load = startLoad({ ...target, connections, seconds: idleSeconds })
      latency[`${name}_idle`] = await load.result
    }
    // one day under each load: day 2 under /health, day 3 under the wallet read
    const loaded: Record<string, unknown> = {}
    const queries = timeQueries(dbh.db)
    const holds = traceConnectionHolds(dbh.db)
    let upTo = 1
    for (const [name, target] of Object.entries(targets)) {
      upTo += 1
      await setCursor(dbh.db, reportInfo(upTo).block)
      const load = startLoad({ ...target, connections })
      await load.ready
      await new Promise((r) => setTimeout(r, 500))
      await send({ type: 'start' })
      holds.start()
      const gc = gcPauses()
      const delay = monitorEventLoopDelay({ resolution: 10 })
      delay.enable()
      const run = await runDays(dbh.db, runner, `day-${upTo}`)
      delay.disable()
      await send({ type: 'end' })
      load.stop()
      latency[`${name}_during_day`] = await load.result
      const day = run.days[upTo - 1]
      const stalls = {
        event_loop_delay_p50_ms: Math.round(delay.percentile(50) / 1e6),
        event_loop_delay_p99_ms: Math.round(delay.percentile(99) / 1e6),
        event_loop_delay_max_ms: Math.round(delay.max / 1e6),
      }
      loaded[name] = {
        ...stalls,
        gc_pauses: gc.stop(),
        connection_holds: holds.stats(),
        seconds: run.seconds,
        node_cpu_seconds: Number(run.node_cpu_seconds.toFixed(1)),
        wallets: day?.wallets,
        wallets_per_second: Math.round((day?.wallets ?? 0) / run.seconds),
      }
    }
    await runner.close()
    await app.close()
    await send({
      type: 'result',
      history: { ...history, seconds: historySeconds },
      first_day: firstDay,
      days_under_load: loaded,
      queries_during_days: queries,
      latency,
      jobs: jobMs,
      max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    })
  } finally {
    await dbh.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

const modes: Record<string, () => Promise<void>> = { seed, days, embedded, 'bull-worker': bullWorker }
const run = mode ? modes[mode] : undefined
if (!run) {
  console.error(`usage: day-worker.ts ${Object.keys(modes).join('|')} '<json>'`)
  process.exit(2)
}
await run()
// exit explicitly: createBullRunner's close() leaves its worker's Redis connection open (reported)
process.exit(0)
