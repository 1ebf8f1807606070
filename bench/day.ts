/**
 * Benchmark: the day pipeline (jobs/days: scheduler, shard and finalize processors on the inline runner)
 * on a synthetic history written straight into a scratch Postgres database (test/helpers/synthetic-history.ts),
 * side by side in the same run with a bare COPY of the same rows into the same Postgres (the storage limit):
 *
 * (a) one day at each size of BENCH_SIZES (default 10k, 100k, 1M wallets): seconds from starting the day to
 *     computed, wallets/s, peak RSS (sampled from /proc every 50 ms, in a fresh process per step);
 * (b) the computed day's wallet_records copied out, then COPY'd into an empty clone of the table: rows/s,
 *     and the pipeline's rows/s as a ratio of it; the previous day's rows the same way just before the day
 *     computes, and the day's ratio to the mean of the two (`bracketed`: the machine's speed drifts);
 * (c) a backfill at each size of BENCH_BACKFILL_WALLETS (10k, 100k, 1M holders) of BENCH_BACKFILL_DAYS days (100,
 *     10, 3: one value per size, or one for all), prepared by `startBackfill` as `lsreport backfill` does:
 *     wallet-days/s and time per wallet-day at each size (is a day's cost flat in its wallets?);
 * (d) growth: seconds per million wallets at each size;
 * (a') the same size's next day on BullMQ with BENCH_BULL_WORKERS (2) worker processes on one queue (needs
 *     Redis at REDIS_URL, default 127.0.0.1:6379; skipped without it): shards run in parallel;
 * (e) the embedded mode (PGlite in memory, inline runner, API in the same process): the API's p50/p99
 *     (autocannon in its own process) idle and while a BENCH_EMBEDDED_WALLETS (100k) day computes.
 *
 * Each day before the measured one is computed first, by the same pipeline (the chain's first day has no
 * predecessor: reported apart). Prints a table and writes bench/results/day.json.
 *
 *   npm run bench:day                                  (DATABASE_URL: the server to create scratch databases on)
 *   BENCH_SIZES=10000,100000 BENCH_SKIP=backfill,embedded npm run bench:day
 *   BENCH_KEEP_DB=1 ...                                  (keeps the scratch databases, for EXPLAIN)
 *   BENCH_CPU_PROF=/tmp/prof BENCH_SIZES=100000 BENCH_SKIP=backfill,embedded npm run bench:day
 */
import { fork } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Redis } from 'ioredis'
import pg from 'pg'
import { migrate, openDb } from '../db/index.ts'
import { BENCH_CHAIN_ID, reportInfo } from '../test/helpers/synthetic-history.ts'
import { bareCopy } from './bare-copy.ts'
import { postgresCpuMeter } from './postgres-cpu.ts'

const list = (value: string | undefined, fallback: string) => (value ?? fallback).split(',').filter(Boolean)
const sizes = list(process.env.BENCH_SIZES, '10000,100000,1000000').map(Number)
const skip = new Set(list(process.env.BENCH_SKIP, ''))
const backfillWallets = list(process.env.BENCH_BACKFILL_WALLETS, '10000,100000,1000000').map(Number)
const backfillDayList = list(process.env.BENCH_BACKFILL_DAYS, '100,10,3').map(Number)
/** Days of the backfill at each size: BENCH_BACKFILL_DAYS by position, its last value for the sizes after it. */
const backfillDays = (i: number) => backfillDayList[Math.min(i, backfillDayList.length - 1)] ?? 0
const embeddedWallets = Number(process.env.BENCH_EMBEDDED_WALLETS ?? 100_000)
/** BullMQ variant of each size's day: this many worker processes on one queue (0: skipped). */
const bullWorkers = Number(process.env.BENCH_BULL_WORKERS ?? 2)
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const log = (line: string) => process.stderr.write(`${line}\n`)
/** BENCH_CPU_PROF=dir: the measured workers write V8 CPU profiles there (open in Chrome DevTools). */
const profileDir = process.env.BENCH_CPU_PROF

// ---------------------------------------------------------------------------------------------------------
// scratch databases (created here, dropped at the end: never the user's own database)

async function adminQuery(sql: string, url = databaseUrl) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query(sql)
  } finally {
    await client.end()
  }
}

async function createScratch(label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `lsreport_bench_day_${label}_${process.pid}`
  await adminQuery(`drop database if exists ${name} with (force)`)
  await adminQuery(`create database ${name}`)
  const url = new URL(databaseUrl)
  url.pathname = `/${name}`
  const dbh = await openDb({ databaseUrl: url.toString(), poolMax: 2 })
  await migrate(dbh.db)
  await dbh.close()
  const drop = async () => {
    if (process.env.BENCH_KEEP_DB) log(`kept scratch database ${url}`)
    else await adminQuery(`drop database if exists ${name} with (force)`)
  }
  return { url: url.toString(), drop }
}

// ---------------------------------------------------------------------------------------------------------
// measured child processes

function rssMb(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
    return kb / 1024
  } catch {
    return 0
  }
}

interface WorkerRun<T> {
  result: T
  /** Peak RSS sampled every 50 ms between the worker's `start` and `end` messages. */
  peak_rss_mb: number
  rss_samples: number
  /** CPU seconds of this database's Postgres backends between `start` and `end`. */
  postgres_cpu_seconds: number
  /** ... and of Postgres's shared background processes (checkpointer, WAL writer, bgwriter). */
  postgres_background_cpu_seconds: number
}

function runWorker<T>(
  mode: string,
  workerArgs: { url?: string } & Record<string, unknown>,
  heapMb = 4096,
): Promise<WorkerRun<T>> {
  const database = workerArgs.url ? new URL(workerArgs.url).pathname.slice(1) : '(none)'
  const child = fork(path.join(import.meta.dirname, 'day-worker.ts'), [mode, JSON.stringify(workerArgs)], {
    execArgv: [
      '--import',
      'tsx',
      `--max-old-space-size=${heapMb}`,
      ...(profileDir && mode !== 'seed' ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  let measuring = false
  let peak = 0
  let samples = 0
  let pgCpu: ReturnType<typeof postgresCpuMeter> | undefined
  let pgUsed = { backends: 0, background: 0 }
  const timer = setInterval(() => {
    if (!measuring || child.pid === undefined) return
    peak = Math.max(peak, rssMb(child.pid))
    samples += 1
    if (samples % 10 === 0) pgCpu?.sample()
  }, 50)
  return new Promise((resolve, reject) => {
    let result: T | undefined
    child.on('message', (m: { type: string }) => {
      if (m.type === 'start') {
        measuring = true
        pgCpu = postgresCpuMeter(database)
      } else if (m.type === 'end') {
        measuring = false
        pgUsed = pgCpu?.total() ?? pgUsed
      } else if (m.type === 'result') result = m as T
    })
    child.on('exit', (code) => {
      clearInterval(timer)
      if (code !== 0 || result === undefined) reject(new Error(`bench worker ${mode} exited with ${code}`))
      else
        resolve({
          result,
          peak_rss_mb: Math.round(peak),
          rss_samples: samples,
          postgres_cpu_seconds: pgUsed.backends,
          postgres_background_cpu_seconds: pgUsed.background,
        })
    })
  })
}

interface DayRun {
  seconds: number
  node_cpu_seconds: number
  event_loop_utilization: number
  load_average: number[]
  queries: Record<string, { queries: number; ms: number; max_ms: number }>
  days: { date: string; wallets: number; shards: number; duration_ms: number; content_hash: string }[]
  wallets: number
  jobs: Record<string, { jobs: number; ms: number }>
  shards: { shards: number; shard_ms: number; max_shard_ms: number }
  baseline_rss_mb: number
  max_rss_mb: number
}
interface SeedRun {
  history: { transfers: number; registered: number; walletsAt: number[]; seconds: number }
  first_day: { seconds: number; node_cpu_seconds: number; days: { wallets: number }[]; max_rss_mb: number }
}

/** Prepares a scratch database for the next pass (statistics, dirty pages out: both sides start alike). */
async function settle(url: string) {
  await adminQuery('vacuum analyze', url)
  await adminQuery('checkpoint', url)
}

// ---------------------------------------------------------------------------------------------------------

const fmt = (n: number) => Math.round(n).toLocaleString('en')
const machine = {
  cpus: os.cpus().length,
  cpu_model: os.cpus()[0]?.model ?? 'unknown',
  memory_gb: Number((os.totalmem() / 2 ** 30).toFixed(1)),
  node: process.version,
  postgres: String((await adminQuery('show server_version')).rows[0]?.server_version ?? ''),
  load_average_at_start: os.loadavg().map((l) => Number(l.toFixed(2))),
}
log(
  `machine: ${machine.cpus} cpus (${machine.cpu_model}), ${machine.memory_gb} GB, node ${machine.node}, postgres ${machine.postgres}`,
)

async function redisReachable(): Promise<boolean> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  try {
    await redis.connect()
    return (await redis.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    redis.disconnect()
  }
}
const withBull = bullWorkers > 0 && (await redisReachable())
if (bullWorkers > 0 && !withBull) log(`Redis not reachable at ${redisUrl}: the BullMQ variant is skipped`)

/** The wallet records of the synthetic chain's `day`th report (SQL over `wallet_records`, for `bareCopy`). */
const dayRows = (day: number) =>
  `chain_id = ${BENCH_CHAIN_ID} and report_epoch = ${BigInt(reportInfo(day).epoch)}`

const steady: Record<string, unknown>[] = []
const first: Record<string, unknown>[] = []
for (const holders of sizes) {
  const scratch = await createScratch(String(holders))
  try {
    log(`\n[${fmt(holders)} holders] writing history, computing the first day ...`)
    const seeded = await runWorker<SeedRun>(
      'seed',
      { url: scratch.url, holders, reports: withBull ? 3 : 2 },
      8192,
    )
    const f = seeded.result.first_day
    const firstWallets = f.days[0]?.wallets ?? 0
    first.push({
      holders,
      wallets: firstWallets,
      shards: 1,
      seconds: Number(f.seconds.toFixed(2)),
      wallets_per_second: Math.round(firstWallets / f.seconds),
      peak_rss_mb: seeded.peak_rss_mb,
      history_seconds: Number(seeded.result.history.seconds.toFixed(1)),
      transfers: seeded.result.history.transfers,
      registered: seeded.result.history.registered,
    })
    log(
      `  history: ${fmt(seeded.result.history.transfers)} transfers in ${seeded.result.history.seconds.toFixed(1)}s; ` +
        `first day: ${fmt(firstWallets)} wallets in ${f.seconds.toFixed(1)}s, peak RSS ${seeded.peak_rss_mb} MB`,
    )
    await settle(scratch.url)
    // the storage's speed just before the day too (the previous day's rows, the same columns and nearly
    // as many): the machine's speed drifts by tens of percent within a minute here, and the day's ratio to
    // the mean of the copies on either side of it weighs a drift that is linear over the three alike
    const bareBefore = await bareCopy(scratch.url, dayRows(1))
    log(
      `  bare COPY before: ${fmt(bareBefore.rows)} rows in ${bareBefore.seconds}s = ${fmt(bareBefore.rows_per_second)} rows/s`,
    )
    await settle(scratch.url)
    log(`[${fmt(holders)} holders] day 2 ...`)
    const day = await runWorker<DayRun>('days', { url: scratch.url, upTo: 2 })
    const d = day.result
    const computed = d.days[0]
    log(
      `  day: ${fmt(d.wallets)} wallets in ${d.seconds.toFixed(2)}s = ${fmt(d.wallets / d.seconds)} wallets/s, peak RSS ${day.peak_rss_mb} MB`,
    )
    const bare = await bareCopy(scratch.url, dayRows(2))
    log(`  bare COPY: ${fmt(bare.rows)} rows in ${bare.seconds}s = ${fmt(bare.rows_per_second)} rows/s`)
    const rate = d.wallets / d.seconds
    const bracketing = (bareBefore.rows_per_second + bare.rows_per_second) / 2
    let bullmq: Record<string, unknown> | undefined
    if (withBull) {
      await settle(scratch.url)
      log(`[${fmt(holders)} holders] day 3 on BullMQ, ${bullWorkers} worker processes ...`)
      const b = await runWorker<DayRun & { other_workers?: { cpu_seconds: number; peak_rss_mb: number } }>(
        'days',
        { url: scratch.url, upTo: 3, from: 3, workers: bullWorkers },
      )
      const bRate = b.result.wallets / b.result.seconds
      bullmq = {
        workers: bullWorkers,
        wallets: b.result.wallets,
        seconds: Number(b.result.seconds.toFixed(2)),
        wallets_per_second: Math.round(bRate),
        ratio_to_bare_copy: Number((bRate / bare.rows_per_second).toFixed(3)),
        peak_rss_mb_per_process: Math.max(b.peak_rss_mb, b.result.other_workers?.peak_rss_mb ?? 0),
        node_cpu_seconds: Number(
          (b.result.node_cpu_seconds + (b.result.other_workers?.cpu_seconds ?? 0)).toFixed(1),
        ),
        postgres_cpu_seconds: b.postgres_cpu_seconds,
        content_hash: b.result.days[0]?.content_hash,
      }
      log(
        `  BullMQ x${bullWorkers}: ${fmt(b.result.wallets)} wallets in ${b.result.seconds.toFixed(2)}s = ${fmt(bRate)} wallets/s`,
      )
    }
    steady.push({
      holders,
      wallets: d.wallets,
      shards: computed?.shards,
      seconds: Number(d.seconds.toFixed(2)),
      wallets_per_second: Math.round(rate),
      us_per_wallet: Number(((d.seconds / d.wallets) * 1e6).toFixed(2)),
      peak_rss_mb: day.peak_rss_mb,
      rss_samples: day.rss_samples,
      baseline_rss_mb: d.baseline_rss_mb,
      max_rss_mb: d.max_rss_mb,
      bare_copy: bare,
      bare_copy_before: bareBefore,
      content_hash: computed?.content_hash,
      ratio_to_bare_copy: Number((rate / bare.rows_per_second).toFixed(3)),
      ratio_to_bracketing_bare_copies: Number((rate / bracketing).toFixed(3)),
      node_cpu_seconds: Number(d.node_cpu_seconds.toFixed(1)),
      node_event_loop_utilization: d.event_loop_utilization,
      postgres_cpu_seconds: day.postgres_cpu_seconds,
      postgres_background_cpu_seconds: day.postgres_background_cpu_seconds,
      load_average_after: d.load_average,
      queries: queryTimes(d.queries),
      shard_seconds: Number((d.shards.shard_ms / 1000).toFixed(2)),
      max_shard_ms: d.shards.max_shard_ms,
      jobs: Object.fromEntries(
        Object.entries(d.jobs).map(([k, v]) => [
          k,
          { jobs: v.jobs, seconds: Number((v.ms / 1000).toFixed(2)) },
        ]),
      ),
      ...(bullmq ? { bullmq } : {}),
    })
  } finally {
    await scratch.drop()
  }
}

/** A run's query times by statement kind, in seconds, for the JSON. */
function queryTimes(queries: DayRun['queries']) {
  return Object.fromEntries(
    Object.entries(queries).map(([k, v]) => [
      k,
      { queries: v.queries, seconds: Number((v.ms / 1000).toFixed(2)), max_ms: v.max_ms },
    ]),
  )
}

const backfills: Record<string, unknown>[] = []
for (const [i, holders] of backfillWallets.entries()) {
  const days = backfillDays(i)
  if (skip.has('backfill') || days <= 0) continue
  const scratch = await createScratch(`backfill_${holders}`)
  try {
    log(`\n[backfill] ${days} days x ${fmt(holders)} holders: history and first day ...`)
    await runWorker<SeedRun>('seed', { url: scratch.url, holders, reports: days + 1 }, 8192)
    await settle(scratch.url)
    log(`[backfill] ${days} days x ${fmt(holders)} holders: running ...`)
    const run = await runWorker<DayRun>('days', { url: scratch.url, upTo: days + 1, backfill: true })
    const r = run.result
    const perDay = r.days.map((d) => d.duration_ms)
    const edge = Math.min(5, perDay.length)
    const average = (ms: number[]) => Math.round(ms.reduce((a, b) => a + b, 0) / Math.max(1, ms.length))
    backfills.push({
      holders,
      days: r.days.length,
      wallet_days: r.wallets,
      seconds: Number(r.seconds.toFixed(2)),
      wallet_days_per_second: Math.round(r.wallets / r.seconds),
      us_per_wallet_day: Number(((r.seconds / r.wallets) * 1e6).toFixed(1)),
      peak_rss_mb: run.peak_rss_mb,
      day_ms_first_avg: average(perDay.slice(0, edge)),
      day_ms_last_avg: average(perDay.slice(-edge)),
      day_ms: perDay,
      shards: r.days[0]?.shards,
      jobs: r.jobs,
      queries: queryTimes(r.queries),
      node_cpu_seconds: Number(r.node_cpu_seconds.toFixed(1)),
      node_event_loop_utilization: r.event_loop_utilization,
      postgres_cpu_seconds: run.postgres_cpu_seconds,
      load_average_after: r.load_average,
      content_hash_last: r.days.at(-1)?.content_hash,
    })
    log(
      `  ${r.days.length} days, ${fmt(r.wallets)} wallet-days in ${r.seconds.toFixed(1)}s = ` +
        `${fmt(r.wallets / r.seconds)} wallet-days/s, ${((r.seconds / r.wallets) * 1e6).toFixed(1)} us per wallet-day`,
    )
  } finally {
    await scratch.drop()
  }
}

let embedded: Record<string, unknown> | undefined
if (!skip.has('embedded')) {
  log(`\n[embedded] PGlite, ${fmt(embeddedWallets)} holders, API in the same process ...`)
  const run = await runWorker<Record<string, unknown>>(
    'embedded',
    { holders: embeddedWallets, seconds: 5 },
    8192,
  )
  const { type: _type, ...rest } = run.result
  embedded = { ...rest, peak_rss_mb_during_days: run.peak_rss_mb }
}

// ---------------------------------------------------------------------------------------------------------
// report

const table: string[] = []
const row = (cells: (string | number)[], widths: number[]) =>
  table.push(cells.map((c, i) => String(c).padStart(widths[i] ?? 10)).join('  '))
const widths = [26, 10, 7, 8, 11, 9, 13, 9, 9, 8, 8]
table.push('')
table.push(
  'Day pipeline on Postgres (inline runner), one day after a computed predecessor, vs bare COPY of its rows',
)
row(
  [
    'case',
    'wallets',
    'shards',
    'seconds',
    'wallets/s',
    'peak RSS',
    'bare COPY r/s',
    'pipe/COPY',
    'bracketed',
    'us/wallet',
    'cpu n/pg',
  ],
  widths,
)
for (const s of steady as Record<string, number & { rows_per_second: number }>[]) {
  const bare = s.bare_copy as unknown as { rows_per_second: number }
  row(
    [
      `day, ${fmt(s.holders as number)} holders`,
      fmt(s.wallets as number),
      s.shards as number,
      s.seconds as number,
      fmt(s.wallets_per_second as number),
      `${s.peak_rss_mb} MB`,
      fmt(bare.rows_per_second),
      `${((s.ratio_to_bare_copy as number) * 100).toFixed(0)} %`,
      `${((s.ratio_to_bracketing_bare_copies as number) * 100).toFixed(0)} %`,
      s.us_per_wallet as number,
      `${s.node_cpu_seconds}/${s.postgres_cpu_seconds}`,
    ],
    widths,
  )
}
for (const s of steady) {
  const b = s.bullmq as
    | {
        workers: number
        wallets: number
        seconds: number
        wallets_per_second: number
        ratio_to_bare_copy: number
        peak_rss_mb_per_process: number
        node_cpu_seconds: number
        postgres_cpu_seconds: number
      }
    | undefined
  if (!b) continue
  const bare = s.bare_copy as { rows_per_second: number }
  row(
    [
      `BullMQ x${b.workers}, ${fmt(s.holders as number)}`,
      fmt(b.wallets),
      s.shards as number,
      b.seconds,
      fmt(b.wallets_per_second),
      `${b.peak_rss_mb_per_process} MB`,
      fmt(bare.rows_per_second),
      `${(b.ratio_to_bare_copy * 100).toFixed(0)} %`,
      '',
      Number(((b.seconds / b.wallets) * 1e6).toFixed(2)),
      `${b.node_cpu_seconds}/${b.postgres_cpu_seconds}`,
    ],
    widths,
  )
}
for (const f of first as Record<string, number>[]) {
  row(
    [
      `first day, ${fmt(f.holders as number)}`,
      fmt(f.wallets as number),
      1,
      f.seconds as number,
      fmt(f.wallets_per_second as number),
      `${f.peak_rss_mb} MB`,
      '',
      '',
      '',
      Number((((f.seconds as number) / (f.wallets as number)) * 1e6).toFixed(2)),
      '',
    ],
    widths,
  )
}
if (steady.length > 1) {
  const base = steady[0] as { us_per_wallet: number; wallets: number }
  table.push('')
  table.push(
    `Growth (time per wallet relative to ${fmt(base.wallets)} wallets): ` +
      steady
        .map(
          (s) =>
            `${fmt(s.wallets as number)}: x${((s.us_per_wallet as number) / base.us_per_wallet).toFixed(2)}`,
        )
        .join(', '),
  )
}
if (backfills.length > 0) {
  table.push('')
  table.push("Backfill (lsreport backfill's preparation, inline runner): time per wallet-day by size")
  const bw = [26, 6, 12, 9, 14, 12, 9, 9, 10, 12]
  row(
    [
      'holders',
      'days',
      'wallet-days',
      'seconds',
      'wallet-days/s',
      'us/wallet-day',
      'x largest',
      'peak RSS',
      'cpu n/pg',
      'load after',
    ],
    bw,
  )
  const largest = backfills.at(-1) as { us_per_wallet_day: number }
  for (const b of backfills as Record<string, number>[]) {
    row(
      [
        fmt(b.holders as number),
        b.days as number,
        fmt(b.wallet_days as number),
        b.seconds as number,
        fmt(b.wallet_days_per_second as number),
        b.us_per_wallet_day as number,
        ((b.us_per_wallet_day as number) / largest.us_per_wallet_day).toFixed(2),
        `${b.peak_rss_mb} MB`,
        `${b.node_cpu_seconds}/${b.postgres_cpu_seconds}`,
        String((b.load_average_after as unknown as number[])[0]),
      ],
      bw,
    )
  }
}
if (embedded) {
  const e = embedded as {
    first_day: { seconds: number; days: { wallets: number }[]; load_average: number[] }
    days_under_load: Record<
      string,
      {
        seconds: number
        wallets: number
        wallets_per_second: number
        event_loop_delay_p99_ms: number
        event_loop_delay_max_ms: number
        connection_holds: Record<string, { holds: number; hold_max_ms: number }>
      }
    >
    latency: Record<
      string,
      {
        p50_ms: number
        p99_ms: number
        max_ms: number
        requests_per_second: number
        errors: number
        timeouts: number
      }
    >
    max_rss_mb: number
  }
  table.push('')
  const firstWallets = e.first_day.days[0]?.wallets ?? 0
  table.push(
    `Embedded (PGlite in memory, COPY into a stage table then one move per job; API in the same process): first day ` +
      `${fmt(firstWallets)} wallets in ${e.first_day.seconds.toFixed(1)}s (load ${e.first_day.load_average.join(' ')}); ` +
      `peak RSS ${embedded.max_rss_mb} MB`,
  )
  for (const [name, d] of Object.entries(e.days_under_load)) {
    table.push(
      `  day under ${name} load: ${fmt(d.wallets)} wallets in ${d.seconds.toFixed(1)}s = ${fmt(d.wallets_per_second)} wallets/s; ` +
        `event loop delay p99 ${d.event_loop_delay_p99_ms} ms, max ${d.event_loop_delay_max_ms} ms`,
    )
    // the statements that held PGlite's one connection longest (bench/connection-holds.ts)
    const longest = Object.entries(d.connection_holds)
      .sort((a, b) => b[1].hold_max_ms - a[1].hold_max_ms)
      .slice(0, 3)
      .map(([label, h]) => `${label} (${h.holds}x, max ${h.hold_max_ms} ms)`)
    table.push(`    longest holds of the connection: ${longest.join('; ')}`)
  }
  const lw = [34, 9, 9, 9, 9, 8]
  row(['API latency (10 connections)', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'errors'], lw)
  for (const [name, l] of Object.entries(e.latency)) {
    row([name, fmt(l.requests_per_second), l.p50_ms, l.p99_ms, l.max_ms, l.errors + l.timeouts], lw)
  }
}
console.log(table.join('\n'))

const out = path.join(import.meta.dirname, 'results', 'day.json')
fs.mkdirSync(path.dirname(out), { recursive: true })
fs.writeFileSync(
  out,
  `${JSON.stringify(
    {
      bench: 'day',
      machine,
      note: 'ratios are the day pipeline rows/s over a bare COPY of the same rows into an empty clone of wallet_records, measured in the same run on the same Postgres',
      steady_days: steady,
      first_days: first,
      backfill: backfills,
      embedded,
    },
    null,
    2,
  )}\n`,
)
log(`written ${path.relative(process.cwd(), out)}`)
