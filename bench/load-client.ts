/**
 * The parent side of the load generator's IPC protocol (bench/load.ts, forked in a process of its own):
 * `startLoad`, one run on one route (`ready` once its warm-up is done and the measured run starts, `result`
 * when that run ends, `stop()` to end a run started without `seconds`); `runSlices`, short runs alternating
 * between routes. The one way the benchmarks start a load.
 */
import { fork } from 'node:child_process'
import path from 'node:path'

/** A route under load and its requests. */
export interface LoadTarget {
  url: string
  method?: string
  headers?: Record<string, string>
  /** request bodies, one per request in turn */
  bodies?: string[]
  /** request paths (with query), one per request in turn */
  paths?: string[]
}

/** What bench/load.ts takes (as one JSON argument) for one run on one route. */
export interface LoadArgs extends LoadTarget {
  connections: number
  /** seconds of the measured run (without it: until `stop()`, an hour at most) */
  seconds?: number
  /** seconds of warm-up load before the measured run (not counted) */
  warmup?: number
}

/** What bench/load.ts takes to alternate its load between routes in short slices (`runSlices`). */
export interface SliceArgs {
  connections: number
  targets: LoadTarget[]
  /** the measured slices in the order they run, as indexes into `targets` */
  order: number[]
  /** seconds of each measured slice */
  sliceSeconds: number
  /** seconds of warm-up load of each target in turn before the first slice (not counted) */
  warmup?: number
}

/** One measured slice of a sliced load: its requests over its time, by the load generator's clock. */
export interface SliceResult {
  /** index into the targets */
  target: number
  seconds: number
  requests: number
  errors: number
  timeouts: number
  non2xx: number
  /** CPU seconds of the load generator's process during the slice */
  cpu_seconds: number
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

/** What the parent does around the slices of `runSlices` (each awaited before the next starts). */
export interface SliceHooks {
  /** Before a slice (a warm-up one too) starts: it starts once this has returned (or its promise resolved). */
  before(target: number, measured: boolean): void | Promise<void>
  /** When a measured slice has ended (no load runs until the next `before` has returned). */
  after(slice: SliceResult): void | Promise<void>
}

/**
 * Forks bench/load.ts to alternate its load between `args.targets` in the slices of `args.order` (after a
 * warm-up of each): `hooks.before` runs before each slice and `hooks.after` after each measured one, while no
 * load runs (to switch what the next slice measures and take the server's counters). Resolves with one
 * result per target, over its measured slices together (requests over their summed time, latency from their
 * merged histograms); rejects when any answer was not 2xx, or a hook threw.
 *
 * @example
 * const [a, b] = await runSlices(
 *   { connections: 10, targets: [{ url: a }, { url: b }], order: [0, 1, 1, 0], sliceSeconds: 0.5 },
 *   { before: (target) => console.log('next', target), after: (slice) => console.log(slice.requests) },
 * )
 */
export function runSlices(args: SliceArgs, hooks: SliceHooks): Promise<LoadResult[]> {
  const child = fork(path.join(import.meta.dirname, 'load.ts'), [], { execArgv: ['--import', 'tsx'] })
  return new Promise<LoadResult[]>((resolve, reject) => {
    let received: LoadResult[] | undefined
    let failed: unknown
    // the hooks run one after another, in the order of the messages
    let hooksDone = Promise.resolve()
    const then = (step: () => void | Promise<void>) => {
      hooksDone = hooksDone.then(step).catch((err: unknown) => {
        failed ??= err
        child.kill()
      })
    }
    child.on('message', (m: SliceMessage) => {
      // (its arguments as a message: the targets' bodies may exceed what one argument takes)
      if (m.type === 'started') child.send(args)
      else if (m.type === 'slice') {
        then(async () => {
          await hooks.before(m.target, m.measured)
          child.send('go')
        })
      } else if (m.type === 'slice-end') then(() => hooks.after(m.slice))
      else received = m.results
    })
    child.on('error', reject)
    child.on('exit', (code) => {
      void hooksDone.then(() => {
        const refused = received?.find((r) => r.non2xx > 0)
        if (failed) reject(failed)
        else if (code !== 0 || !received) {
          reject(new Error(`load generator exited with ${code}${received ? '' : ' before its results'}`))
        } else if (refused) {
          const urls = args.targets.map((t) => t.url).join(', ')
          reject(new Error(`${urls}: answers ${refused.status_codes}, not only 2xx: not measured`))
        } else resolve(received)
      })
    })
  })
}

/** What bench/load.ts sends during a sliced load. */
type SliceMessage =
  | { type: 'started' }
  | { type: 'slice'; target: number; measured: boolean }
  | { type: 'slice-end'; slice: SliceResult }
  | { type: 'results'; results: LoadResult[] }
