/**
 * Benchmark: a backfill of a whole history of the protocol's shape, end to end. A synthetic history
 * (test/helpers/synthetic-history.ts: holders minted before report 1, a share of them sending part of their
 * balance each day, new holders depositing, the fee mint, 1 % of holders registered) of BENCH_HISTORY_REPORTS
 * (1,500) daily reports from BENCH_HISTORY_START (2022-10-03: the V0 fee model, then Commercials V3 from
 * 2026-05-01), holders growing from BENCH_HISTORY_HOLDERS (1,000) to BENCH_HISTORY_FINAL_HOLDERS (20,000), is
 * written straight into a scratch database next to DATABASE_URL (dropped afterwards; BENCH_KEEP_DB=1 keeps
 * it); then `lsreport backfill --from <report 1> --to <last report>` runs as a process of its own (the CLI,
 * inline runner) and computes every day. Prints and writes to bench/results/history.json:
 * - wallet-days, total time and wallet-days/s of the CLI run (start to exit), peak RSS of its process tree;
 * - time per wallet-day of the first and the last days (does a day's cost follow its wallets?);
 * - bytes per wallet-day: `wallet_records` (table and indexes, pg_total_relation_size), and the whole database;
 * - the ratio to a bare COPY of the same rows (`bench/bare-copy.ts`) run afterwards: the last days' rows, at
 *   least BENCH_HISTORY_BARE_ROWS (1,000,000) of them (all when fewer).
 *
 *   npm run bench:history
 *   BENCH_HISTORY_REPORTS=200 BENCH_HISTORY_FINAL_HOLDERS=4000 npm run bench:history    (a smaller history)
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { WALLET_RECORD_COLUMNS } from '../db/records/columns.ts'
import {
  BENCH_CHAIN_ID,
  type ReportInfo,
  syntheticDevnetFile,
  writeHistory,
} from '../test/helpers/synthetic-history.ts'
import { bareCopy } from './bare-copy.ts'
import { postgresCpuMeter } from './postgres-cpu.ts'
import { treeRss } from './process-tree.ts'
import { openScratchDb } from './scratch-db.ts'

const env = process.env
const reports = Number(env.BENCH_HISTORY_REPORTS ?? 1_500)
const holders = Number(env.BENCH_HISTORY_HOLDERS ?? 1_000)
const finalHolders = Number(env.BENCH_HISTORY_FINAL_HOLDERS ?? 20_000)
const start = env.BENCH_HISTORY_START ?? '2022-10-03'
const bareRows = Number(env.BENCH_HISTORY_BARE_ROWS ?? 1_000_000)
const databaseUrl = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const repo = path.resolve(import.meta.dirname, '..')
const log = (line: string) => process.stderr.write(`${line}\n`)
const fmt = (n: number) => Math.round(n).toLocaleString('en')

/** The variables of the service a developer's shell may hold: the CLI gets only the benchmark's own. */
const SERVICE_VARS = /^(DATABASE_URL|REDIS_URL|RPC_URL|CHAIN|DATA_DIR|LOG_LEVEL|DAY_SHARD_WALLETS)$/

/** Runs `lsreport backfill` on the range; its peak RSS (process tree) and Postgres CPU sampled meanwhile. */
async function runBackfill(url: string, dataDir: string, from: string, to: string) {
  const childEnv: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(env)) if (!SERVICE_VARS.test(k)) childEnv[k] = v
  Object.assign(childEnv, { DATABASE_URL: url, CHAIN: 'devnet', DATA_DIR: dataDir, LOG_LEVEL: 'warn' })
  const cpu = postgresCpuMeter(new URL(url).pathname.slice(1))
  const started = performance.now()
  const child = spawn(
    process.execPath,
    [path.join(repo, 'bin', 'lsreport.mjs'), 'backfill', '--from', from, '--to', to],
    { env: childEnv, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let peak = 0
  let ticks = 0
  const timer = setInterval(() => {
    if (child.pid !== undefined) peak = Math.max(peak, treeRss(child.pid).total)
    if (++ticks % 20 === 0) cpu.sample()
  }, 100)
  let stdout = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  clearInterval(timer)
  const seconds = (performance.now() - started) / 1000
  if (code !== 0) throw new Error(`lsreport backfill exited with ${code}: ${stdout}`)
  return {
    seconds,
    peak_rss_mb: Math.round(peak / 2 ** 20),
    postgres_cpu_seconds: cpu.total().backends,
    summary: JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>,
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-bench-history-'))
const dbh = await openScratchDb(databaseUrl)
const db = dbh.db
const url = (db.client.config.connection as { connectionString: string }).connectionString
try {
  log(
    `history: ${fmt(reports)} reports from ${start}, holders ${fmt(holders)} -> ${fmt(finalHolders)}, ` +
      `scratch database ${new URL(url).pathname.slice(1)}`,
  )
  const written = performance.now()
  const history = await writeHistory(db, {
    holders,
    reports,
    newHolders: (finalHolders - holders) / Math.max(1, reports - 1) / holders,
    firstReportTime: Date.parse(`${start}T12:00:00Z`),
  })
  await db.raw('vacuum analyze')
  await db.raw('checkpoint')
  const historySeconds = (performance.now() - written) / 1000
  const first = history.reports[0] as ReportInfo
  const last = history.reports.at(-1) as ReportInfo
  log(
    `  written in ${historySeconds.toFixed(1)} s: ${fmt(history.transfers)} transfers, ` +
      `${fmt(history.registered)} registered wallets, reports ${first.date} .. ${last.date}`,
  )

  syntheticDevnetFile(dataDir)
  log(`backfill: lsreport backfill --from ${first.date} --to ${last.date} ...`)
  const run = await runBackfill(url, dataDir, first.date, last.date)
  const days: { wallets: number; duration_ms: number; report_epoch: string; date: string }[] = await db(
    'days',
  )
    .select('wallets', 'duration_ms', 'report_epoch', db.raw("to_char(date, 'YYYY-MM-DD') as date"))
    .where({ chain_id: BENCH_CHAIN_ID, status: 'computed' })
    .orderBy('block_number')
  if (days.length !== reports) throw new Error(`${days.length} of ${reports} days computed`)
  const walletDays = days.reduce((n, d) => n + d.wallets, 0)
  const perWalletDay = (some: typeof days) =>
    Number(
      (
        (some.reduce((n, d) => n + d.duration_ms, 0) / some.reduce((n, d) => n + d.wallets, 0)) *
        1000
      ).toFixed(1),
    )
  const edge = Math.max(1, Math.min(100, Math.floor(reports / 10)))
  // storage
  const [size] = (
    await db.raw(
      `select pg_total_relation_size('wallet_records')::bigint as total,
              pg_relation_size('wallet_records')::bigint as heap,
              pg_indexes_size('wallet_records')::bigint as indexes,
              pg_database_size(current_database())::bigint as database`,
    )
  ).rows as { total: string; heap: string; indexes: string; database: string }[]
  const bytes = (value: string | undefined) => Math.round(Number(value) / walletDays)

  // bare COPY of the last days' rows (at least `bareRows`)
  let rows = 0
  let since = days.length
  while (since > 0 && rows < bareRows) {
    since -= 1
    rows += (days[since] as (typeof days)[number]).wallets
  }
  log(`bare COPY of the last ${fmt(days.length - since)} days' ${fmt(rows)} rows ...`)
  const bare = await bareCopy(
    url,
    `chain_id = ${BENCH_CHAIN_ID} and report_epoch >= ${BigInt((days[since] as (typeof days)[number]).report_epoch)}`,
  )
  const rate = walletDays / run.seconds
  const result = {
    bench: 'history',
    machine: {
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? 'unknown',
      node: process.version,
      load_average_after: os.loadavg().map((l) => Number(l.toFixed(2))),
    },
    history: {
      reports,
      from: first.date,
      to: last.date,
      holders_first: days[0]?.wallets,
      holders_last: days.at(-1)?.wallets,
      transfers: history.transfers,
      registered: history.registered,
      seconds: Number(historySeconds.toFixed(1)),
    },
    backfill: {
      wallet_days: walletDays,
      seconds: Number(run.seconds.toFixed(1)),
      wallet_days_per_second: Math.round(rate),
      peak_rss_mb: run.peak_rss_mb,
      postgres_cpu_seconds: run.postgres_cpu_seconds,
      us_per_wallet_day_first_days: perWalletDay(days.slice(0, edge)),
      us_per_wallet_day_last_days: perWalletDay(days.slice(-edge)),
      days_compared: edge,
      cli_summary: run.summary,
    },
    storage: {
      wallet_records_bytes: Number(size?.total),
      wallet_records_bytes_per_wallet_day: bytes(size?.total),
      heap_bytes_per_wallet_day: bytes(size?.heap),
      index_bytes_per_wallet_day: bytes(size?.indexes),
      database_bytes_per_wallet_day: bytes(size?.database),
      columns: WALLET_RECORD_COLUMNS.length,
    },
    bare_copy: bare,
    ratio_to_bare_copy: Number((rate / bare.rows_per_second).toFixed(3)),
  }
  console.log(
    [
      '',
      `History backfill (lsreport backfill, inline runner): ${fmt(reports)} days, holders ${fmt(days[0]?.wallets ?? 0)} -> ${fmt(days.at(-1)?.wallets ?? 0)}`,
      `  ${fmt(walletDays)} wallet-days in ${run.seconds.toFixed(1)} s = ${fmt(rate)} wallet-days/s; peak RSS ${run.peak_rss_mb} MB`,
      `  per wallet-day: first ${edge} days ${result.backfill.us_per_wallet_day_first_days} us, last ${edge} days ${result.backfill.us_per_wallet_day_last_days} us (day durations)`,
      `  storage: wallet_records ${result.storage.wallet_records_bytes_per_wallet_day} bytes per wallet-day ` +
        `(heap ${result.storage.heap_bytes_per_wallet_day}, indexes ${result.storage.index_bytes_per_wallet_day}); ` +
        `database ${result.storage.database_bytes_per_wallet_day} bytes per wallet-day`,
      `  bare COPY of ${fmt(bare.rows)} of the same rows: ${fmt(bare.rows_per_second)} rows/s; backfill / bare COPY = ${(result.ratio_to_bare_copy * 100).toFixed(0)} %`,
    ].join('\n'),
  )
  const out = path.join(repo, 'bench', 'results', 'history.json')
  fs.mkdirSync(path.dirname(out), { recursive: true })
  fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`)
  log(`written ${path.relative(process.cwd(), out)}`)
} finally {
  if (env.BENCH_KEEP_DB) {
    log(`kept scratch database ${url}`)
    await db.destroy()
  } else await dbh.close()
  fs.rmSync(dataDir, { recursive: true, force: true })
}
