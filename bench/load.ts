/**
 * The benchmarks' load generator, in a process of its own (never inside the measured one): autocannon on
 * one route for `seconds` (after `warmup` seconds not counted), cycling through `bodies` or `paths` when
 * given (one per request, in turn). Its result (latency in ms, the process's CPU seconds during the measured
 * run) is printed as one JSON line on stdout; forked with an IPC channel instead (`startLoad`,
 * bench/load-client.ts, as the benchmarks do) it also sends `{type: 'ready'}` when the measured run starts
 * and `{type: 'result', result}` when it ends, and stops early when the parent sends 'stop'.
 *
 * Forked without an argument, it asks its parent for `SliceArgs` (`runSlices` in bench/load-client.ts) and alternates its
 * load between them in short slices, each a run of its own: before each slice it sends
 * `{type: 'slice', target, measured}` and waits for 'go' (the parent switches what it must, takes its
 * counters); after each measured slice it sends `{type: 'slice-end', slice}`; at the end `{type: 'results',
 * results}`, one per target over its measured slices together (latency from their merged histograms).
 *
 *   node --import tsx bench/load.ts '{"url":"http://127.0.0.1:8080/health","connections":10,"seconds":5}'
 */
import autocannon from 'autocannon'
import type { LoadArgs, LoadResult, LoadTarget, SliceArgs, SliceResult } from './load-client.ts'

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

const args = (process.argv[2] ? JSON.parse(process.argv[2]) : await argsFromParent()) as LoadArgs | SliceArgs
const autocannonRun = autocannon as unknown as Run

/**
 * autocannon's options: one request per body or path, built once (a `setupRequest` callback would make
 * autocannon rebuild every request, load-generator CPU that the bare route's run does not pay).
 */
function options(target: LoadTarget, seconds: number, connections: number) {
  const method = target.method ?? 'GET'
  const headers = target.headers ?? {}
  const requests =
    target.bodies && target.bodies.length > 0
      ? target.bodies.map((body) => ({ method, headers, body }))
      : target.paths && target.paths.length > 0
        ? target.paths.map((path) => ({ method, headers, path }))
        : [{ method, headers }]
  return { url: target.url, connections, duration: seconds, timeout: 30, requests }
}

/** One autocannon run; `started` is called with the instance (to stop it early). */
function run(
  target: LoadTarget,
  seconds: number,
  connections: number,
  started?: (instance: Instance) => void,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const instance = autocannonRun(options(target, seconds, connections), (err, result) =>
      err ? reject(err) : resolve(result as RunResult),
    )
    started?.(instance)
  })
}

/** A run's own result before autocannon aggregates it (`skipAggregateResult`): a slice's, merged later. */
interface RawResult {
  latencies: string
  totalCompletedRequests: number
  totalBytes: number
  errors: number
  timeouts: number
  non2xx: number
}

/** One run of a slice, unaggregated (its latency histogram kept encoded, to be merged with its target's). */
function runRaw(target: LoadTarget, seconds: number, connections: number): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    autocannonRun(
      // stopped within 100 ms of its duration (autocannon checks every sampleInt: a second by default)
      { ...options(target, seconds, connections), sampleInt: 100, skipAggregateResult: true },
      (err, result) => (err ? reject(err) : resolve(result as unknown as RawResult)),
    )
  })
}

/** The LoadResult of an aggregated run, with its own count, time and CPU. */
function summary(
  result: RunResult,
  run: {
    seconds: number
    requests: number
    requestsPerSecond: number
    bytesPerSecond: number
    cpuSeconds: number
  },
): LoadResult {
  const codes = Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => `${code}:${s.count}`)
  return {
    seconds: Number(run.seconds.toFixed(1)),
    requests: run.requests,
    requests_per_second: Math.round(run.requestsPerSecond),
    p50_ms: result.latency.p50,
    p90_ms: result.latency.p90,
    p99_ms: result.latency.p99,
    max_ms: result.latency.max,
    mb_per_second: Number((run.bytesPerSecond / 2 ** 20).toFixed(1)),
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    status_codes: codes.join(' '),
    cpu_seconds: Number(run.cpuSeconds.toFixed(2)),
  }
}

/** One run on one route (`LoadArgs`): its result in one message (or on stdout). */
async function runOnce(args: LoadArgs): Promise<void> {
  if (args.warmup && args.warmup > 0) await run(args, args.warmup, args.connections)
  // this process's CPU from the start of the measured run (the warm-up is not counted)
  let cpuAtStart = process.cpuUsage()
  const result = await run(args, args.seconds ?? 3600, args.connections, (instance) => {
    cpuAtStart = process.cpuUsage()
    process.send?.({ type: 'ready' })
    process.on('message', (m) => {
      if (m === 'stop') instance.stop()
    })
  })
  const cpu = process.cpuUsage(cpuAtStart)
  const measured = summary(result, {
    seconds: result.duration,
    requests: result.requests.total,
    requestsPerSecond: result.requests.average,
    bytesPerSecond: result.throughput.average,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  })
  if (process.send) process.send({ type: 'result', result: measured }, () => process.exit(0))
  else process.stdout.write(`${JSON.stringify(measured)}\n`)
}

/**
 * A sliced load's arguments, asked of the parent (`{type: 'started'}`) and sent as its answer: its targets'
 * bodies may exceed what one command-line argument takes.
 */
function argsFromParent(): Promise<unknown> {
  const answer = new Promise((resolve) => process.once('message', resolve))
  process.send?.({ type: 'started' })
  return answer
}

/** Sends `message` to the parent; resolves once it is sent. */
function send(message: object): Promise<void> {
  return new Promise((resolve) => process.send?.(message, () => resolve()))
}

/**
 * The targets' load in slices (`SliceArgs`): a warm-up of each in turn, then the measured slices in `order`,
 * each started when the parent answers 'go' to its `{type: 'slice'}` message; a slice's requests and time are
 * this process's count and clock around the run, connections included (each slice opens its own).
 */
async function runSlices(args: SliceArgs): Promise<void> {
  if (!process.send) throw new Error('a sliced load is driven by its parent: fork it (runSlices)')
  // each target's measured slices: autocannon's raw result and the slice's own count, time and CPU
  const slices: { raw: RawResult; slice: SliceResult }[][] = args.targets.map(() => [])
  const steps = [
    ...(args.warmup ? args.targets.map((_, target) => ({ target, measured: false })) : []),
    ...args.order.map((target) => ({ target, measured: true })),
  ]
  for (const { target, measured } of steps) {
    const go = new Promise((resolve) => process.once('message', resolve))
    await send({ type: 'slice', target, measured })
    await go
    const route = args.targets[target] as LoadTarget
    const cpuAtStart = process.cpuUsage()
    const started = performance.now()
    const result = await runRaw(route, measured ? args.sliceSeconds : (args.warmup ?? 0), args.connections)
    if (!measured) continue
    const cpu = process.cpuUsage(cpuAtStart)
    const slice: SliceResult = {
      target,
      seconds: (performance.now() - started) / 1000,
      requests: result.totalCompletedRequests,
      errors: result.errors,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
      cpu_seconds: (cpu.user + cpu.system) / 1e6,
    }
    slices[target]?.push({ raw: result, slice })
    await send({ type: 'slice-end', slice })
  }
  const results = args.targets.map((route, target) => {
    const own = slices[target] ?? []
    const sum = (value: (s: (typeof own)[number]) => number) => own.reduce((n, s) => n + value(s), 0)
    const seconds = Math.max(
      sum((s) => s.slice.seconds),
      1e-9,
    )
    const requests = sum((s) => s.slice.requests)
    const merged = (
      autocannon as unknown as { aggregateResult(r: RawResult[], o: object): RunResult }
    ).aggregateResult(
      own.map((s) => s.raw),
      options(route, args.sliceSeconds, args.connections),
    )
    return summary(merged, {
      seconds,
      requests,
      requestsPerSecond: requests / seconds,
      bytesPerSecond: sum((s) => s.raw.totalBytes) / seconds,
      cpuSeconds: sum((s) => s.slice.cpu_seconds),
    })
  })
  await send({ type: 'results', results })
  process.exit(0)
}

if ('targets' in args) await runSlices(args)
else await runOnce(args)
