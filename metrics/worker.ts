import { Gauge, type Histogram, Registry } from 'prom-client'
import { jobDurationHistogram } from './instrument.ts'
import { nodeProcessRegistry } from './process.ts'

/** What a worker process tells of its jobs in flight at scrape time (jobs/job-watch.ts). */
export interface WorkerJobsState {
  inFlight: number
  stuck: number
  /** The longest time a job in flight went without progress, in seconds (0 when none is in flight). */
  longestIdleSeconds: number
}

/** A `lsreport worker` process's metrics: its registry (served on WORKER_PORT's /metrics) and the job histogram. */
export interface WorkerMetrics {
  registry: Registry
  /** Durations of the jobs this worker ran, by job name and outcome (`instrumentProcessors`). */
  jobDuration: Histogram<'job' | 'outcome'>
  /** The Prometheus text of every metric. */
  scrape(): Promise<string>
}

/**
 * The metrics of one worker process: Node's process metrics, `lsreport_job_duration_seconds` of the jobs it
 * ran, and its jobs in flight now (`lsreport_worker_jobs_in_flight`, `lsreport_worker_stuck_jobs`,
 * `lsreport_worker_job_idle_seconds`), read from `state` at each scrape. The cluster-wide figures (queue depth,
 * follower lag, days) are the API's /metrics: a worker does not repeat them.
 *
 * @example
 * const metrics = createWorkerMetrics(() => ({ inFlight: 1, stuck: 0, longestIdleSeconds: 0.2 }))
 * await metrics.scrape() // "# HELP lsreport_worker_jobs_in_flight ..."
 */
export function createWorkerMetrics(state: () => WorkerJobsState): WorkerMetrics {
  const registry = Registry.merge([nodeProcessRegistry()])
  const jobDuration = jobDurationHistogram(registry)
  const gauges: [string, string, (s: WorkerJobsState) => number][] = [
    ['lsreport_worker_jobs_in_flight', 'Jobs this worker runs now', (s) => s.inFlight],
    [
      'lsreport_worker_stuck_jobs',
      'Jobs of this worker in flight without progress past WORKER_STUCK_AFTER_MS (its /health answers 503)',
      (s) => s.stuck,
    ],
    [
      'lsreport_worker_job_idle_seconds',
      'Longest time a job of this worker in flight went without progress (0: none in flight)',
      (s) => s.longestIdleSeconds,
    ],
  ]
  for (const [name, help, read] of gauges) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(state()))
      },
    })
  }
  return { registry, jobDuration, scrape: () => registry.metrics() }
}
