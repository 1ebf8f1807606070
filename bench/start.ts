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
 * `--live-seconds N` (default 60) keeps sampling for N seconds of live mode after the banner (a new day every 5 s):
 * the peak of that window is reported apart, so a growth after the history shows.
 *
 *   npm run bench:start [-- --runs 3] [-- --direct] [-- --live-seconds 60]
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
const liveSeconds = args.includes('--live-seconds') ? Number(args[args.indexOf('--live-seconds') + 1]) : 60
if (!Number.isFinite(liveSeconds) || liveSeconds < 0)
  throw new Error('--live-seconds takes a number of seconds')
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

/**
 * Stops the start as Ctrl-C in its terminal does: SIGTERM to its whole process group (npm passes no signal on
 * to the service it runs, which was left running, orphaned, beside the next run), SIGKILL after 15 s.
 */
function stop(child: ChildProcess): Promise<void> {
  const group = (signal: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), signal)
    } catch {
      // the group is gone
    }
  }
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => group('SIGKILL'), 15_000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    group('SIGTERM')
  })
}

interface Run {
  health_ms: number | null
  first_day_ms: number | null
  banner_ms: number | null
  peak_rss_mb: number
  peak_rss_at_ms: number
  /** peak RSS of the tree during the live window after the banner, and the RSS at its end */
  live_peak_rss_mb: number | null
  live_end_rss_mb: number | null
  /** the tree's RSS every 10 s of the live window, per process: [seconds after the banner, { name: MB }] */
  live_samples: [number, Record<string, number>][]
  peak_by_process_mb: Record<string, number>
  phases: { at_ms: number; line: string }[]
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20)

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
    // a process group of its own, stopped whole (see stop)
    detached: true,
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
  let livePeak: number | null = null
  let liveEnd: number | null = null
  let inLive = false
  let liveStarted = 0
  const liveSamples: Run['live_samples'] = []
  const peakEach = new Map<number, [string, number]>()
  const sampler = setInterval(() => {
    if (child.pid === undefined) return
    const { total, each } = treeRss(child.pid)
    if (inLive) {
      livePeak = Math.max(livePeak ?? 0, total)
      liveEnd = total
      const at = Math.floor((performance.now() - liveStarted) / 10_000) * 10
      if (liveSamples.length === 0 || (liveSamples[liveSamples.length - 1]?.[0] ?? 0) < at) {
        liveSamples.push([at, Object.fromEntries([...each.values()].map(([name, rss]) => [name, mb(rss)]))])
      }
    }
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
    // longer in live mode, to see the memory settle (or grow)
    inLive = true
    liveStarted = performance.now()
    await new Promise((r) => setTimeout(r, liveSeconds * 1000))
  } finally {
    clearInterval(sampler)
    await stop(child)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  return {
    health_ms: health,
    first_day_ms: firstDay,
    banner_ms: banner,
    peak_rss_mb: mb(peak),
    peak_rss_at_ms: peakAt,
    live_peak_rss_mb: livePeak === null ? null : mb(livePeak),
    live_end_rss_mb: liveEnd === null ? null : mb(liveEnd),
    live_samples: liveSamples,
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
      `history computed (banner) ${seconds(run.banner_ms)}, peak RSS ${run.peak_rss_mb} MB at ${seconds(run.peak_rss_at_ms)}; ` +
      `${liveSeconds} s of live mode: peak ${run.live_peak_rss_mb ?? '-'} MB, ${run.live_end_rss_mb ?? '-'} MB at its end`,
  )
  for (const [name, rss] of Object.entries(run.peak_by_process_mb)) console.log(`  ${name}: peak ${rss} MB`)
  for (const [at, each] of run.live_samples)
    console.log(
      `  live +${at} s: ${Object.entries(each)
        .map(([name, rss]) => `${name} ${rss} MB`)
        .join(', ')}`,
    )
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
  live_seconds: liveSeconds,
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
