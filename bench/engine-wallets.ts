/**
 * Benchmark: the engine's per-wallet hot path (prepareReport once, computeWalletRecord per wallet),
 * on deterministic synthetic wallets. Prints wallets/second and writes bench/results/engine-wallets.json.
 *
 *   npx tsx bench/engine-wallets.ts [counts...]     (default: 10000 100000 1000000)
 */
import fs from 'node:fs'
import path from 'node:path'
import { computeWalletRecord, prepareReport } from '../engine/index.ts'
import { syntheticReport, syntheticWallets } from '../fixtures/engine/synthetic.ts'

const counts = process.argv.slice(2).map(Number)
const sizes = counts.length > 0 ? counts : [10_000, 100_000, 1_000_000]
const ctx = prepareReport(syntheticReport())

// warm-up (JIT)
for (const w of syntheticWallets(20_000, 7)) computeWalletRecord(ctx, w)

const results: { wallets: number; seconds: number; wallets_per_second: number; checksum: string }[] = []
for (const n of sizes) {
  const inputs = [...syntheticWallets(n)]
  const start = process.hrtime.bigint()
  let checksum = 0n
  for (const w of inputs) checksum += computeWalletRecord(ctx, w).rewards_eth
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  const row = {
    wallets: n,
    seconds: Number(seconds.toFixed(3)),
    wallets_per_second: Math.round(n / seconds),
    checksum: checksum.toString(),
  }
  results.push(row)
  console.log(
    `engine: ${n.toLocaleString('en')} wallets in ${row.seconds}s = ${row.wallets_per_second.toLocaleString('en')} wallets/s (1 core)`,
  )
}

const out = path.join(import.meta.dirname, 'results', 'engine-wallets.json')
fs.mkdirSync(path.dirname(out), { recursive: true })
fs.writeFileSync(
  out,
  `${JSON.stringify({ bench: 'engine-wallets', node: process.version, results }, null, 2)}\n`,
)
console.log(`written ${path.relative(process.cwd(), out)}`)
