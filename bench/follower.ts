/**
 * Benchmark: chain ingestion. Builds a devnet history (anvil + simulator), then times the follower
 * ingesting it from scratch into Postgres (a scratch database next to DATABASE_URL, dropped afterwards)
 * or PGlite. Prints events/second and writes bench/results/follower.json.
 *
 *   npx tsx bench/follower.ts [days=100] [wallets=1000]
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setupFromDevnet } from '../cli/chain-setup.ts'
import { createLogger } from '../common/logger.ts'
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
started = performance.now()
const result = await follower.syncOnce()
const seconds = (performance.now() - started) / 1000
let rows = 0
for (const table of EVENT_TABLES) {
  const [row] = await dbh.db(table).count<{ count: string }[]>({ count: '*' })
  rows += Number(row?.count ?? 0)
}
const summary = {
  bench: 'follower',
  backend: dbh.backend,
  days,
  wallets,
  blocks: Number(result.target - devnet.deployBlock),
  rows,
  seconds: Number(seconds.toFixed(2)),
  rows_per_second: Math.round(rows / seconds),
}
console.log(
  `follower (${dbh.backend}): ${rows} rows over ${summary.blocks} blocks in ${summary.seconds}s = ${summary.rows_per_second} rows/s`,
)

await dbh.close()
await devnet.stop()
fs.rmSync(dataDir, { recursive: true, force: true })
const out = path.join(import.meta.dirname, 'results', 'follower.json')
fs.mkdirSync(path.dirname(out), { recursive: true })
fs.writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`)
console.log(`written ${path.relative(process.cwd(), out)}`)
