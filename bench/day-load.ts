/**
 * The load generator of bench/day.ts's embedded case, in a process of its own (never inside the measured
 * one): autocannon on one URL for `seconds`, or until the parent sends 'stop'. Sends `{type: 'ready'}` when
 * it starts and `{type: 'result', result}` (latency in ms) when it ends.
 *
 *   node --import tsx bench/day-load.ts '{"url":"http://127.0.0.1:8080/health","connections":10}'
 */
import autocannon from 'autocannon'

interface LoadArgs {
  url: string
  connections: number
  seconds?: number
  headers?: Record<string, string>
}
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
  errors: number
  timeouts: number
  non2xx: number
  duration: number
}
type Instance = { stop(): void }
type Run = (options: object, done: (err: Error | null, result: RunResult) => void) => Instance

const args = JSON.parse(process.argv[2] ?? '{}') as LoadArgs
const run = autocannon as unknown as Run
const instance = run(
  {
    url: args.url,
    connections: args.connections,
    // until stopped by the parent (an hour at most)
    duration: args.seconds ?? 3600,
    headers: args.headers ?? {},
    timeout: 30,
  },
  (err, result) => {
    if (err) throw err
    process.send?.(
      {
        type: 'result',
        result: {
          seconds: Number(result.duration.toFixed(1)),
          requests: result.requests.total,
          requests_per_second: Math.round(result.requests.average),
          p50_ms: result.latency.p50,
          p90_ms: result.latency.p90,
          p99_ms: result.latency.p99,
          max_ms: result.latency.max,
          errors: result.errors,
          timeouts: result.timeouts,
          non2xx: result.non2xx,
        },
      },
      () => process.exit(0),
    )
  },
)
process.send?.({ type: 'ready' })
process.on('message', (m) => {
  if (m === 'stop') instance.stop()
})
