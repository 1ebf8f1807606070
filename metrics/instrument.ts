import type { ServiceMetrics } from './service.ts'

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
