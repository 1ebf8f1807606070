import type { Processor } from '../runner.ts'
import type { ServiceMetrics } from './service.ts'

/**
 * Wraps processors so each run is observed in `lsreport_job_duration_seconds` (the jobs run in this process).
 *
 * @example
 * const runner = createInlineRunner(instrumentProcessors(jobs.processors, metrics), logger)
 */
export function instrumentProcessors(
  processors: Record<string, Processor>,
  metrics: Pick<ServiceMetrics, 'jobDuration'>,
): Record<string, Processor> {
  return Object.fromEntries(
    Object.entries(processors).map(([name, processor]) => [
      name,
      async (job) => {
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
