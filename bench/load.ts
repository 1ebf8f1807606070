/**
 * The benchmarks' load generator, in a process of its own (never inside the measured one): autocannon on
 * one route for `seconds` (after `warmup` seconds not counted), cycling through `bodies` or `paths` when
 * given (one per request, in turn). Its result (latency in ms, the process's CPU seconds during the measured
 * run) is printed as one JSON line on stdout; forked with an IPC channel instead (`startLoad`,
 * bench/load-client.ts, as the benchmarks do) it also sends `{type: 'ready'}` when the measured run starts
 * and `{type: 'result', result}` when it ends, and stops early when the parent sends 'stop'.
 *
 *   node --import tsx bench/load.ts '{"url":"http://127.0.0.1:8080/health","connections":10,"seconds":5}'
 */
import autocannon from 'autocannon'
import type { LoadArgs, LoadResult } from './load-client.ts'

interface Histogram {
  average: number
  p50: number
  p90: number
  p99: number
  max: number
}
interface RunResult {
  requests: Histogram & { total: number }
  latency: Histogram
  throughput: Histogram
  errors: number
  timeouts: number
  non2xx: number
  duration: number
  statusCodeStats?: Record<string, { count: number }>
}
type Instance = { stop(): void }
type Run = (options: object, done: (err: Error | null, result: RunResult) => void) => Instance

const args = JSON.parse(process.argv[2] ?? '{}') as LoadArgs
const autocannonRun = autocannon as unknown as Run

/**
 * autocannon's options: one request per body or path, built once (a `setupRequest` callback would make
 * autocannon rebuild every request, load-generator CPU that the bare route's run does not pay).
 */
function options(seconds: number) {
  const method = args.method ?? 'GET'
  const headers = args.headers ?? {}
  const requests =
    args.bodies && args.bodies.length > 0
      ? args.bodies.map((body) => ({ method, headers, body }))
      : args.paths && args.paths.length > 0
        ? args.paths.map((path) => ({ method, headers, path }))
        : [{ method, headers }]
  return { url: args.url, connections: args.connections, duration: seconds, timeout: 30, requests }
}

/** One autocannon run; `started` is called with the instance (to stop it early). */
function run(seconds: number, started?: (instance: Instance) => void): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const instance = autocannonRun(options(seconds), (err, result) => (err ? reject(err) : resolve(result)))
    started?.(instance)
  })
}

if (args.warmup && args.warmup > 0) await run(args.warmup)
// this process's CPU from the start of the measured run (the warm-up is not counted)
let cpuAtStart = process.cpuUsage()
const result = await run(args.seconds ?? 3600, (instance) => {
  cpuAtStart = process.cpuUsage()
  process.send?.({ type: 'ready' })
  process.on('message', (m) => {
    if (m === 'stop') instance.stop()
  })
})
const codes = Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => `${code}:${s.count}`)
const cpu = process.cpuUsage(cpuAtStart)
const summary: LoadResult = {
  seconds: Number(result.duration.toFixed(1)),
  requests: result.requests.total,
  requests_per_second: Math.round(result.requests.average),
  p50_ms: result.latency.p50,
  p90_ms: result.latency.p90,
  p99_ms: result.latency.p99,
  max_ms: result.latency.max,
  mb_per_second: Number((result.throughput.average / 2 ** 20).toFixed(1)),
  errors: result.errors,
  timeouts: result.timeouts,
  non2xx: result.non2xx,
  status_codes: codes.join(' '),
  cpu_seconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
}
if (process.send) process.send({ type: 'result', result: summary }, () => process.exit(0))
else process.stdout.write(`${JSON.stringify(summary)}\n`)
