import { Histogram, type Registry } from 'prom-client'
import type { ServiceMetrics } from './service.ts'

/**
 * `lsreport_job_duration_seconds{job, outcome}` in `registry`: the durations of the jobs run in this process
 * (the embedded `lsreport up`'s, a worker's), observed by `instrumentProcessors`.
 *
 * @example
 * const jobDuration = jobDurationHistogram(registry)
 */
export function jobDurationHistogram(registry: Registry): Histogram<'job' | 'outcome'> {
  return new Histogram({
    name: 'lsreport_job_duration_seconds',
    help: 'Duration of the jobs run in this process, by job name and outcome (succeeded, failed)',
    labelNames: ['job', 'outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180, 600],
    registers: [registry],
  })
}

/**
 * Wraps processors so each run is observed in `lsreport_job_duration_seconds` (the jobs run in this process).
 * Generic over the job a processor takes, so this layer needs nothing of jobs/ (`Processor` fits).
 *
 * @example
 * const runner = createInlineRunner(instrumentProcessors(jobs.processors, metrics), logger)
 */
export function instrumentProcessors<Job>(
  processors: Record<string, (job: Job) => Promise<unknown>>,
  metrics: Pick<ServiceMetrics, 'jobDuration'>,
): Record<string, (job: Job) => Promise<unknown>> {
  return Object.fromEntries(
    Object.entries(processors).map(([name, processor]) => [
      name,
      async (job: Job) => {
        const end = metrics.jobDuration.startTimer({ job: name })
        try {
          const result = await processor(job)
          end({ outcome: 'succeeded' })
          return result
        } catch (err) {
          end({ outcome: 'failed' })
          throw err
        }
      },
    ]),
  )
}
