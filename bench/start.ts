/**
 * Benchmark: the first start. Spawns `npm start` (or, with --direct, `node bin/lsreport.mjs up`) in a fresh
 * temporary DATA_DIR on a free PORT, as a newcomer's first `npm start`, and measures:
 * - until `/health` answers 200 (the API serves),
 * - until the first day's records are computed (`GET /eth/v0/protocol/2026-04-01` answers 200),
 * - until the start banner (every day of the devnet history computed),
 * - the peak RSS of the whole process tree (npm, node, anvil, ...), sampled every 100 ms from /proc, and
 *   the peak of each process,
 * - the phase lines the start printed, with their times.
 * Then stops it with SIGTERM. Prints a table and writes bench/results/start.json.
 *
 *   npm run bench:start [-- --runs 3] [-- --direct]
 */
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { freePort } from '../test/helpers/free-port.ts'
import { treeRss } from './process-tree.ts'

const repo = path.resolve(import.meta.dirname, '..')
const args = process.argv.slice(2)
const runs = Number(args[args.indexOf('--runs') + 1] ?? 1) || 1
const direct = args.includes('--direct')
const LIMIT_MS = 240_000
const FIRST_DATE = '2026-04-01'

/** The variables of the service that a developer's shell may hold: the bench starts from none of them. */
const SERVICE_VARS =
  /^(DATABASE_URL|REDIS_URL|RPC_URL|CHAIN|BEACON_URL|BASE_URL|AUTH_URL|LOG_LEVEL|JWT_PRIVATE_KEY|SIGNING_KEY_SECRET|TOKEN_TTL_SECONDS)$/

async function status(url: string): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) })
    await res.arrayBuffer()
    return res.status
  } catch {
    return 0
  }
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

interface Run {
  health_ms: number | null
  first_day_ms: number | null
  banner_ms: number | null
  peak_rss_mb: number
  peak_rss_at_ms: number
  peak_by_process_mb: Record<string, number>
  phases: { at_ms: number; line: string }[]
}

async function once(): Promise<Run> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-bench-start-'))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !SERVICE_VARS.test(k)))
  const [command, commandArgs] = direct
    ? [process.execPath, [path.join(repo, 'bin/lsreport.mjs'), 'up']]
    : ['npm', ['start', '--silent']]
  const started = performance.now()
  const child = spawn(command, commandArgs, {
    cwd: repo,
    env: { ...env, DATA_DIR: dataDir, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: false,
  })
  const since = () => Math.round(performance.now() - started)
  const phases: Run['phases'] = []
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
    let newline = stderr.indexOf('\n')
    while (newline !== -1) {
      const line = stderr.slice(0, newline).trim()
      stderr = stderr.slice(newline + 1)
      if (line.startsWith('lsreport up:')) phases.push({ at_ms: since(), line })
      if (line.startsWith('lsreport is up')) phases.push({ at_ms: since(), line: 'banner' })
      newline = stderr.indexOf('\n')
    }
  })
  let peak = 0
  let peakAt = 0
  const peakEach = new Map<number, [string, number]>()
  const sampler = setInterval(() => {
    if (child.pid === undefined) return
    const { total, each } = treeRss(child.pid)
    if (total > peak) {
      peak = total
      peakAt = since()
    }
    // a process may rename itself (npm): keep its latest name
    for (const [pid, [name, rss]] of each)
      peakEach.set(pid, [name, Math.max(peakEach.get(pid)?.[1] ?? 0, rss)])
  }, 100)
  let health: number | null = null
  let firstDay: number | null = null
  let banner: number | null = null
  try {
    while (since() < LIMIT_MS) {
      if (child.exitCode !== null) throw new Error(`the start exited with ${child.exitCode}:\n${stderr}`)
      if (health === null && (await status(`${base}/health`)) === 200) health = since()
      if (health !== null && firstDay === null) {
        if ((await status(`${base}/eth/v0/protocol/${FIRST_DATE}`)) === 200) firstDay = since()
      }
      banner ??= phases.find((p) => p.line === 'banner')?.at_ms ?? null
      if (health !== null && firstDay !== null && banner !== null) break
      await new Promise((r) => setTimeout(r, 50))
    }
    // a little longer in live mode, to see the memory settle
    await new Promise((r) => setTimeout(r, 3_000))
  } finally {
    clearInterval(sampler)
    await stop(child)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  const mb = (bytes: number) => Math.round(bytes / 2 ** 20)
  return {
    health_ms: health,
    first_day_ms: firstDay,
    banner_ms: banner,
    peak_rss_mb: mb(peak),
    peak_rss_at_ms: peakAt,
    peak_by_process_mb: Object.fromEntries(
      [...peakEach].map(([pid, [name, rss]]) => [`${name} (${pid})`, mb(rss)]),
    ),
    phases,
  }
}

const seconds = (ms: number | null) => (ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`)
const results: Run[] = []
console.log(
  `bench:start: ${runs} run(s) of ${direct ? 'node bin/lsreport.mjs up' : 'npm start'} on ${os.availableParallelism()} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
)
for (let i = 0; i < runs; i++) {
  const run = await once()
  results.push(run)
  console.log(
    `run ${i + 1}: /health ${seconds(run.health_ms)}, first day computed ${seconds(run.first_day_ms)}, ` +
      `history computed (banner) ${seconds(run.banner_ms)}, peak RSS ${run.peak_rss_mb} MB at ${seconds(run.peak_rss_at_ms)}`,
  )
  for (const [name, rss] of Object.entries(run.peak_by_process_mb)) console.log(`  ${name}: peak ${rss} MB`)
  for (const phase of run.phases) console.log(`  ${seconds(phase.at_ms).padStart(7)}  ${phase.line}`)
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? null
}
const pick = (key: 'health_ms' | 'first_day_ms' | 'banner_ms') =>
  median(results.map((r) => r[key]).filter((v): v is number => v !== null))
const summary = {
  bench: 'start',
  command: direct ? 'node bin/lsreport.mjs up' : 'npm start',
  cores: os.availableParallelism(),
  load_average_at_start: os.loadavg()[0],
  runs: results.length,
  median_health_ms: pick('health_ms'),
  median_first_day_ms: pick('first_day_ms'),
  median_banner_ms: pick('banner_ms'),
  max_peak_rss_mb: Math.max(...results.map((r) => r.peak_rss_mb)),
  results,
}
console.log(
  `median: /health ${seconds(summary.median_health_ms)}, first day ${seconds(summary.median_first_day_ms)}, ` +
    `history computed ${seconds(summary.median_banner_ms)}; max peak RSS ${summary.max_peak_rss_mb} MB`,
)
fs.mkdirSync(path.join(repo, 'bench/results'), { recursive: true })
fs.writeFileSync(path.join(repo, 'bench/results/start.json'), `${JSON.stringify(summary, null, 2)}\n`)
