/**
 * How fast the simulator builds a history on the protocol's own bytecode (not a test). Each configuration gets
 * its own anvil.
 *
 *   npx tsx bench/devnet-history.ts                      # 30 d x 200 wallets and 200 d x 2000 wallets
 *   npx tsx bench/devnet-history.ts --days 91 --wallets 500
 *
 * Prints one line per configuration and writes bench/results/devnet-history.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { startProtocolHistory } from '../devnet/testing-history.ts'

interface Figures {
  days: number
  wallets: number
  total_ms: number
  deploy_ms: number
  history_ms: number
  ms_per_day: number
  transactions: number
  transactions_per_second: number
  blocks: number
  reports: number
}

async function measure(days: number, wallets: number): Promise<Figures> {
  const started = performance.now()
  // anvil, the deployment and the simulator (the simulator's setup of the wallets runs with the first day)
  const run = await startProtocolHistory({ seed: 1, walletCount: wallets, startDate: '2026-04-01' })
  try {
    const deployed = performance.now()
    await run.simulator.runDays(days)
    const finished = performance.now()
    const { counts, reports } = run.simulator.state()
    const historyMs = finished - deployed
    return {
      days,
      wallets,
      total_ms: Math.round(finished - started),
      deploy_ms: Math.round(deployed - started),
      history_ms: Math.round(historyMs),
      ms_per_day: Math.round((historyMs / days) * 10) / 10,
      transactions: counts.transactions,
      transactions_per_second: Math.round(counts.transactions / (historyMs / 1000)),
      blocks: counts.blocks,
      reports: reports.length,
    }
  } finally {
    await run.stop()
  }
}

const { values } = parseArgs({ options: { days: { type: 'string' }, wallets: { type: 'string' } } })
const configurations =
  values.days || values.wallets
    ? [[Number(values.days ?? 30), Number(values.wallets ?? 200)] as const]
    : ([
        [30, 200],
        [200, 2000],
      ] as const)

const results: Figures[] = []
for (const [days, wallets] of configurations) {
  const figures = await measure(days, wallets)
  results.push(figures)
  console.log(
    `${days} days x ${wallets} wallets: ${(figures.total_ms / 1000).toFixed(1)} s total ` +
      `(deploy ${figures.deploy_ms} ms, history ${(figures.history_ms / 1000).toFixed(1)} s, ${figures.ms_per_day} ms/day), ` +
      `${figures.transactions} txs in ${figures.blocks} blocks, ${figures.transactions_per_second} txs/s`,
  )
}
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results', 'devnet-history.json')
mkdirSync(path.dirname(out), { recursive: true })
writeFileSync(
  out,
  `${JSON.stringify({ machine: { cpus: os.cpus().length, node: process.version }, results }, null, 2)}\n`,
)
console.log(`wrote ${path.relative(process.cwd(), out)}`)
