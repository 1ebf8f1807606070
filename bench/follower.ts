/**
 * Benchmark: chain ingestion. Builds a devnet history (anvil + simulator), then times the follower
 * ingesting it from scratch into Postgres (a scratch database next to DATABASE_URL, dropped afterwards)
 * or PGlite. Prints events/second and writes bench/results/follower.json. In the same run, the same rows are
 * COPY'd into empty clones of their tables in one transaction (the storage's speed): the ratio
 * is the follower's rows/s over that bare COPY's. The follower's CPU time (this process) and anvil's are
 * printed beside it: the follower is bound by this process's CPU, not by the database (bench/README.md).
 *
 *   npx tsx bench/follower.ts [days=100] [wallets=1000]
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { setupFromDevnet } from '../cli/chain-setup.ts'
import { createLogger } from '../common/logger.ts'
import { copyOutText, isPglite, pgliteOf } from '../db/bulk.ts'
import type { Db } from '../db/index.ts'
import { EVENT_TABLES } from '../db/repos/chain.ts'
import { startDevnet } from '../devnet/index.ts'
import { createJobs } from '../jobs/index.ts'
import { openScratchDb } from './scratch-db.ts'

const days = Number(process.argv[2] ?? 100)
const wallets = Number(process.argv[3] ?? 1000)
const databaseUrl = process.env.DATABASE_URL
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-bench-follower-'))

let started = performance.now()
const devnet = await startDevnet({
  dataDir,
  days,
  walletCount: wallets,
  dayIntervalMs: 0,
  blockIntervalMs: 60_000,
})
const historySeconds = (performance.now() - started) / 1000
console.log(`devnet: ${days} days x ${wallets} wallets built in ${historySeconds.toFixed(1)}s`)

const dbh = await openScratchDb(databaseUrl)
// the follower exactly as `lsreport up` builds it
const { follower } = createJobs({
  db: dbh.db,
  logger: createLogger({ level: 'silent' }),
  chain: setupFromDevnet(devnet),
  confirmations: 0,
})
/** CPU milliseconds used so far by the process `pid` (user + system, from /proc; 0 when unreadable). */
function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}

/**
 * The rows of every event table COPY'd (text format, from memory) into empty clones of their tables, in one
 * transaction after a checkpoint: what the same rows cost the storage alone. On PGlite (no COPY FROM STDIN
 * through its adapter) each table's text is COPY'd from the blob PGlite reads as `/dev/blob`.
 */
async function bareCopy(db: Db): Promise<{ rows: number; seconds: number; rows_per_second: number }> {
  const texts = new Map<string, Buffer>()
  for (const table of EVENT_TABLES) {
    texts.set(table, Buffer.from(await copyOutText(db, `select * from ${table}`), 'latin1'))
  }
  const conn = (await db.client.acquireConnection()) as pg.PoolClient
  try {
    for (const table of EVENT_TABLES)
      await conn.query(`create table ${table}_bare (like ${table} including all)`)
    await conn.query('checkpoint')
    const started = performance.now()
    let rows = 0
    await conn.query('BEGIN')
    for (const [table, text] of texts) {
      if (isPglite(db)) {
        const pglite = pgliteOf(db)
        await pglite._handleBlob(new Blob([text]))
        try {
          rows += Number((await conn.query(`COPY ${table}_bare FROM '/dev/blob'`)).rowCount)
        } finally {
          await pglite._cleanupBlob()
        }
        continue
      }
      const copy = conn.query(copyFrom(`COPY ${table}_bare FROM STDIN`))
      await pipeline(Readable.from([text]), copy)
      rows += Number(copy.rowCount)
    }
    await conn.query('COMMIT')
    const seconds = (performance.now() - started) / 1000
    for (const table of EVENT_TABLES) await conn.query(`drop table ${table}_bare`)
    return { rows, seconds: Number(seconds.toFixed(3)), rows_per_second: Math.round(rows / seconds) }
  } finally {
    await db.client.releaseConnection(conn)
  }
}

/** The pid of the devnet's anvil: this process's child named anvil (from /proc), or undefined. */
function anvilChildPid(): number | undefined {
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      const close = stat.lastIndexOf(')')
      const ppid = Number(stat.slice(close + 2).split(' ')[1])
      if (ppid === process.pid && stat.slice(stat.indexOf('(') + 1, close) === 'anvil') return Number(pid)
    } catch {
      // the process ended meanwhile
    }
  }
  return undefined
}

if (dbh.backend === 'postgres') await dbh.db.raw('checkpoint')
const anvilPid = anvilChildPid()
const anvilCpuBefore = processCpuMs(anvilPid)
const cpuBefore = process.cpuUsage()
started = performance.now()
const result = await follower.syncOnce()
const seconds = (performance.now() - started) / 1000
const cpu = process.cpuUsage(cpuBefore)
const anvilCpuMs = processCpuMs(anvilPid) - anvilCpuBefore
let rows = 0
for (const table of EVENT_TABLES) {
  const [row] = await dbh.db(table).count<{ count: string }[]>({ count: '*' })
  rows += Number(row?.count ?? 0)
}
const bare = await bareCopy(dbh.db)
const rowsPerSecond = Math.round(rows / seconds)
const summary = {
  bench: 'follower',
  backend: dbh.backend,
  days,
  wallets,
  blocks: Number(result.target - devnet.deployBlock),
  rows,
  seconds: Number(seconds.toFixed(2)),
  rows_per_second: rowsPerSecond,
  node_cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
  anvil_cpu_ms: anvilPid === undefined ? null : anvilCpuMs,
  load_average: os.loadavg().map((l) => Number(l.toFixed(2))),
  bare_copy: bare ?? null,
  ratio_to_bare_copy: bare ? Number((rowsPerSecond / bare.rows_per_second).toFixed(3)) : null,
}
console.log(
  `follower (${dbh.backend}): ${rows} rows over ${summary.blocks} blocks in ${summary.seconds}s = ${summary.rows_per_second} rows/s; CPU ms: node ${summary.node_cpu_ms}, anvil ${summary.anvil_cpu_ms ?? '-'}`,
)
if (bare) {
  console.log(
    `bare COPY of the same rows: ${bare.rows} rows in ${bare.seconds}s = ${bare.rows_per_second} rows/s; follower / COPY = ${((summary.ratio_to_bare_copy ?? 0) * 100).toFixed(1)} %`,
  )
}

await dbh.close()
await devnet.stop()
fs.rmSync(dataDir, { recursive: true, force: true })
const out = path.join(import.meta.dirname, 'results', 'follower.json')
fs.mkdirSync(path.dirname(out), { recursive: true })
fs.writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`)
console.log(`written ${path.relative(process.cwd(), out)}`)
