/**
 * The parent side of the load generator's IPC protocol (bench/load.ts, forked in a process of its own):
 * `ready` once its warm-up is done and the measured run starts, `result` when that run ends, `stop()` to end
 * a run started without `seconds`. The one way the benchmarks start a load.
 */
import { fork } from 'node:child_process'
import path from 'node:path'

/** What bench/load.ts takes (as one JSON argument). */
export interface LoadArgs {
  url: string
  connections: number
  /** seconds of the measured run (without it: until `stop()`, an hour at most) */
  seconds?: number
  method?: string
  headers?: Record<string, string>
  /** request bodies, one per request in turn */
  bodies?: string[]
  /** request paths (with query), one per request in turn */
  paths?: string[]
  /** seconds of warm-up load before the measured run (not counted) */
  warmup?: number
}

/** What bench/load.ts reports of its measured run (latency in ms). */
export interface LoadResult {
  seconds: number
  requests: number
  requests_per_second: number
  p50_ms: number
  p90_ms: number
  p99_ms: number
  max_ms: number
  mb_per_second: number
  errors: number
  timeouts: number
  non2xx: number
  status_codes: string
  /** CPU seconds of the load generator's process during the measured run */
  cpu_seconds: number
}

/**
 * The rate limit of a server under load: still on (its hooks and headers are part of every request's cost)
 * with a budget no run reaches, 1,000,000 requests a second per client or address. Per minute (the
 * default window), a fast machine's unauthenticated runs, which share one address, ran out of it within a
 * benchmark and measured 429s.
 */
export const UNREACHED_RATE_LIMIT = { RATE_LIMIT_MAX: '1000000', RATE_LIMIT_WINDOW_MS: '1000' }

/** A load generator running: its measured run's start, its result, and a way to end it early. */
export interface RunningLoad {
  ready: Promise<void>
  result: Promise<LoadResult>
  stop(): void
}

/**
 * Forks bench/load.ts with `args`. Its result is refused (the promise rejects) when any answer of the measured
 * run was not 2xx; connection errors and timeouts are reported in it.
 *
 * @example
 * const load = startLoad({ url: 'http://127.0.0.1:8080/health', connections: 10, seconds: 5 })
 * await load.ready // the warm-up is over: take the server's counters now
 * const { requests_per_second } = await load.result
 */
export function startLoad(args: LoadArgs): RunningLoad {
  const child = fork(path.join(import.meta.dirname, 'load.ts'), [JSON.stringify(args)], {
    execArgv: ['--import', 'tsx'],
  })
  let onReady = () => {}
  const ready = new Promise<void>((resolve) => {
    onReady = resolve
  })
  const result = new Promise<LoadResult>((resolve, reject) => {
    let received: LoadResult | undefined
    child.on('message', (m: { type: string; result?: LoadResult }) => {
      if (m.type === 'ready') onReady()
      else if (m.type === 'result') received = m.result
    })
    child.on('error', reject)
    child.on('exit', (code) => {
      if (code !== 0 || !received) {
        reject(new Error(`load generator exited with ${code}${received ? '' : ' before its result'}`))
      } else if (received.non2xx > 0) {
        // a 429 or a 404 costs the server less than the answer the run is about: not a measurement of it
        reject(new Error(`${args.url}: answers ${received.status_codes}, not only 2xx: not measured`))
      } else resolve(received)
    })
  })
  return { ready, result, stop: () => child.send('stop') }
}
