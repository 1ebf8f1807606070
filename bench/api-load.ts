/**
 * The load generator of bench/api.ts, in a process of its own (never inside the measured one): autocannon
 * on one route for `seconds`, cycling through `bodies` or `paths` when given (one per request, in turn).
 * Prints one JSON line with the result (latency in ms) on stdout and exits.
 *
 *   node --import tsx bench/api-load.ts '{"url":"http://127.0.0.1:8080/health","connections":10,"seconds":5}'
 */
import autocannon from 'autocannon'

interface LoadArgs {
  url: string
  connections: number
  seconds: number
  method?: string
  headers?: Record<string, string>
  /** request bodies, one per request in turn */
  bodies?: string[]
  /** request paths (with query), one per request in turn */
  paths?: string[]
  /** seconds of warm-up load before the measured run (not counted) */
  warmup?: number
}
interface Histogram {
  average: number
  mean: number
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
type Run = (options: object) => Promise<RunResult>

const args = JSON.parse(process.argv[2] ?? '{}') as LoadArgs
const run = autocannon as unknown as Run

function options(seconds: number) {
  let next = 0
  const bodies = args.bodies
  const paths = args.paths
  return {
    url: args.url,
    connections: args.connections,
    duration: seconds,
    timeout: 30,
    requests: [
      {
        method: args.method ?? 'GET',
        headers: args.headers ?? {},
        setupRequest: (request: Record<string, unknown>) => {
          const i = next++
          if (bodies && bodies.length > 0) request.body = bodies[i % bodies.length]
          if (paths && paths.length > 0) request.path = paths[i % paths.length]
          return request
        },
      },
    ],
  }
}

if (args.warmup && args.warmup > 0) await run(options(args.warmup))
const result = await run(options(args.seconds))
const codes = Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => `${code}:${s.count}`)
process.stdout.write(
  `${JSON.stringify({
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
    cpu_seconds: Number(((process.cpuUsage().user + process.cpuUsage().system) / 1e6).toFixed(2)),
  })}\n`,
)
