/**
 * Benchmark: an organization-wide export of a quarter (issue 38: peak RSS of the worker under 300 MB for
 * 20k wallets x 90 days). A synthetic history (test/helpers/synthetic-history.ts, COPY'd straight into a
 * scratch database next to DATABASE_URL, dropped afterwards; BENCH_KEEP_DB=1 keeps it) of
 * BENCH_EXPORT_REPORTS (91) daily reports from 2026-04-01 (Q2 2026: the v0 fee model, then Commercials V3 from
 * 2026-05-01) of BENCH_EXPORT_WALLETS (20,000) holders, every one registered in accounts of 100 wallets of
 * one organization, computed by `lsreport backfill` (the real day pipeline). Then, each in a process of its
 * own (`node --import tsx bench/export.ts --child ...`: the builder of jobs/exports/build.ts writing a file,
 * as the export worker does), the quarter's `journal` export (group by quarter) and `records` export (group
 * by month), each timed, with the process's peak RSS (its own /proc/self/status VmHWM at the end, and
 * /proc/<pid> sampled every 50 ms by this process). The machine's limit in the same run: a bare
 * `COPY (select ...) TO STDOUT` of the rows each export reads (account records; and, for `records`, the
 * wallet records whose rates it states), and the export's rows/s of input over that one's.
 *
 *   npm run bench:export
 *   BENCH_EXPORT_WALLETS=2000 npm run bench:export      (a smaller history)
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import pg from 'pg'
import { to as copyTo } from 'pg-copy-streams'
import { openDb } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { buildExport, type ExportSpec } from '../jobs/exports/build.ts'
import { BENCH_CHAIN_ID, syntheticDevnetFile, writeHistory } from '../test/helpers/synthetic-history.ts'
import { treeRss } from './process-tree.ts'
import { openScratchDb } from './scratch-db.ts'

const env = process.env
const repo = path.resolve(import.meta.dirname, '..')
const log = (line: string) => process.stderr.write(`${line}\n`)
const fmt = (n: number) => Math.round(n).toLocaleString('en')
const ORG = 'org_bench_0'
const FROM = '2026-04-01'
const TO = '2026-06-30'

/** The child: one export into a file, then its figures as one JSON line on stdout. */
async function child(url: string, kind: 'journal' | 'records', file: string) {
  const dbh = await openDb({ databaseUrl: url, poolMax: 2 })
  const spec: ExportSpec = {
    chainId: BENCH_CHAIN_ID,
    orgId: ORG,
    accountIds: null,
    from: FROM,
    to: TO,
    granularity: kind === 'journal' ? 'quarter' : 'month',
    currency: null,
    kind,
    apiVersion: 'v1',
  }
  const started = performance.now()
  const out = fs.createWriteStream(file)
  const result = await buildExport(createRepos(dbh.db), spec, out)
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  )
  const seconds = (performance.now() - started) / 1000
  const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1]
  await dbh.close()
  process.stdout.write(
    `${JSON.stringify({ ...result, seconds, vm_hwm_mb: Math.round(Number(hwm) / 1024) })}\n`,
  )
}

/** Runs one export in a process of its own, sampling its RSS. */
async function runChild(url: string, kind: 'journal' | 'records') {
  const file = path.join(os.tmpdir(), `lsreport-bench-export-${process.pid}-${kind}.csv`)
  const started = performance.now()
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(repo, 'bench', 'export.ts'), '--child', url, kind, file],
    { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let sampled = 0
  const timer = setInterval(() => {
    if (proc.pid !== undefined) sampled = Math.max(sampled, treeRss(proc.pid).total)
  }, 50)
  let stdout = ''
  proc.stdout.on('data', (c: Buffer) => {
    stdout += c.toString()
  })
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve))
  clearInterval(timer)
  fs.rmSync(file, { force: true })
  if (code !== 0) throw new Error(`the ${kind} export exited with ${code}`)
  const figures = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
    rows: number
    bytes: number
    seconds: number
    vm_hwm_mb: number
  }
  return {
    ...figures,
    process_seconds: (performance.now() - started) / 1000,
    sampled_peak_rss_mb: Math.round(sampled / 2 ** 20),
  }
}

/** A bare COPY ... TO STDOUT of a query's rows into nothing: rows, seconds. */
async function bareCopyOut(url: string, query: string) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const started = performance.now()
    let bytes = 0
    const stream = client.query(copyTo(`COPY (${query}) TO STDOUT`))
    await pipeline(stream, async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) bytes += chunk.length
    })
    const seconds = (performance.now() - started) / 1000
    return { rows: Number(stream.rowCount), seconds, mb: Number((bytes / 2 ** 20).toFixed(1)) }
  } finally {
    await client.end()
  }
}

/** `lsreport backfill` of the history (the real day pipeline, inline runner). */
async function backfill(url: string, dataDir: string) {
  syntheticDevnetFile(dataDir)
  const childEnv: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(env)) {
    if (!/^(DATABASE_URL|REDIS_URL|RPC_URL|CHAIN|DATA_DIR|LOG_LEVEL|DAY_SHARD_WALLETS)$/.test(k))
      childEnv[k] = v
  }
  Object.assign(childEnv, { DATABASE_URL: url, CHAIN: 'devnet', DATA_DIR: dataDir, LOG_LEVEL: 'warn' })
  const proc = spawn(
    process.execPath,
    [path.join(repo, 'bin', 'lsreport.mjs'), 'backfill', '--from', FROM, '--to', TO],
    { env: childEnv, stdio: ['ignore', 'ignore', 'inherit'] },
  )
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve))
  if (code !== 0) throw new Error(`lsreport backfill exited with ${code}`)
}

async function main() {
  const wallets = Number(env.BENCH_EXPORT_WALLETS ?? 20_000)
  const reports = Number(env.BENCH_EXPORT_REPORTS ?? 91)
  const databaseUrl = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-bench-export-'))
  const dbh = await openScratchDb(databaseUrl)
  const db = dbh.db
  const url = (db.client.config.connection as { connectionString: string }).connectionString
  try {
    log(
      `export: ${fmt(wallets)} wallets x ${reports} reports from ${FROM}, scratch ${new URL(url).pathname.slice(1)}`,
    )
    let t = performance.now()
    await writeHistory(db, {
      holders: wallets,
      reports,
      newHolders: 0,
      registered: 1,
      firstReportTime: Date.parse(`${FROM}T12:00:00Z`),
    })
    // every registered wallet in one organization: the export is organization-wide
    await db('accounts').update({ org_id: ORG })
    await db('wallets').update({ org_id: ORG })
    await db.raw('vacuum analyze')
    log(`  history written in ${((performance.now() - t) / 1000).toFixed(1)} s; lsreport backfill ...`)
    t = performance.now()
    await backfill(url, dataDir)
    await db.raw('vacuum analyze')
    const [counts] = (
      await db.raw(
        `select (select count(*) from wallet_records where org_id = ?)::int as wallet_days,
                (select count(*) from account_records where org_id = ?)::int as account_days,
                (select count(*) from accounts where org_id = ?)::int as accounts`,
        [ORG, ORG, ORG],
      )
    ).rows as { wallet_days: number; account_days: number; accounts: number }[]
    if (!counts) throw new Error('no counts')
    log(
      `  computed in ${((performance.now() - t) / 1000).toFixed(1)} s: ${fmt(counts.wallet_days)} wallet-days, ` +
        `${fmt(counts.accounts)} accounts (${fmt(counts.account_days)} account-days)`,
    )
    const results: Record<string, unknown> = { wallets, reports, ...counts }
    for (const kind of ['journal', 'records'] as const) {
      const run = await runChild(url, kind)
      const accountQuery = `select * from account_records where org_id = '${ORG}' order by account_id, date`
      const walletQuery = `select * from wallet_records where org_id = '${ORG}' order by account_id, date, address`
      const bare = await bareCopyOut(url, kind === 'journal' ? accountQuery : walletQuery)
      const inputRows = kind === 'journal' ? counts.account_days : counts.wallet_days + counts.account_days
      const ratio = inputRows / run.seconds / (bare.rows / bare.seconds)
      results[kind] = {
        ...run,
        input_rows: inputRows,
        bare_copy_out: bare,
        ratio_to_bare_copy: Number(ratio.toFixed(3)),
      }
      log(
        `${kind}: ${fmt(run.rows)} rows, ${(run.bytes / 2 ** 20).toFixed(1)} MB in ${run.seconds.toFixed(2)} s ` +
          `(process ${run.process_seconds.toFixed(2)} s); peak RSS ${run.vm_hwm_mb} MB (VmHWM; sampled ` +
          `${run.sampled_peak_rss_mb} MB); reads ${fmt(inputRows)} rows at ${fmt(inputRows / run.seconds)} rows/s, ` +
          `a bare COPY TO STDOUT of ${fmt(bare.rows)} of them ${fmt(bare.rows / bare.seconds)} rows/s: ` +
          `${(ratio * 100).toFixed(0)} %`,
      )
    }
    fs.mkdirSync(path.join(repo, 'bench', 'results'), { recursive: true })
    fs.writeFileSync(path.join(repo, 'bench', 'results', 'export.json'), JSON.stringify(results, null, 2))
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
    if (env.BENCH_KEEP_DB === '1') await dbh.db.destroy()
    else await dbh.close()
  }
}

const args = process.argv.slice(2)
if (args[0] === '--child') await child(args[1] as string, args[2] as 'journal' | 'records', args[3] as string)
else await main()
