import { ConfigError } from '../common/errors.ts'
import { createJobWatch } from '../jobs/job-watch.ts'
import { serveWorkerHealth } from '../jobs/worker-health.ts'
import { createWorkerMetrics, instrumentProcessors } from '../metrics/index.ts'
import { setupFromConfig } from './chain-setup.ts'
import { createContext } from './context.ts'
import { buildJobs } from './up.ts'

/**
 * `lsreport worker`: the jobs on BullMQ (REDIS_URL), every processor watched (jobs/job-watch.ts) and timed.
 * With WORKER_PORT, once the jobs run, `/health` (503 naming a job in flight without progress for
 * WORKER_STUCK_AFTER_MS) and `/metrics` (this process's registry) are served on HOST:WORKER_PORT.
 */
export async function worker(env: NodeJS.ProcessEnv): Promise<void> {
  const ctx = await createContext(env, { migrate: false, logTo: 'stdout' })
  ctx.shutdown.installSignalHandlers()
  const { config } = ctx
  if (!config.redisUrl)
    throw new ConfigError('REDIS_URL is required for `lsreport worker` (`lsreport up` runs jobs inline)')
  const watch = createJobWatch({ stuckAfterMs: config.workerStuckAfterMs })
  const metrics = createWorkerMetrics(() => {
    const jobs = watch.inFlight()
    return {
      inFlight: jobs.length,
      stuck: jobs.filter((job) => job.stuck).length,
      longestIdleSeconds: (jobs[0]?.idleMs ?? 0) / 1000,
    }
  })
  const jobs = await buildJobs(ctx, await setupFromConfig(config), undefined, (processors) =>
    instrumentProcessors(watch.wrap(processors), metrics),
  )
  await jobs.start()
  if (config.workerPort === undefined) return
  const server = await serveWorkerHealth({
    host: config.host,
    port: config.workerPort,
    watch,
    metrics,
    metricsToken: config.metricsToken,
    guesses: { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs },
  })
  // closed first (added last): a probe during the shutdown gets no answer rather than a stale one
  ctx.shutdown.add('worker health', () => server.close())
  ctx.logger.info(
    { url: server.url, stuck_after_ms: config.workerStuckAfterMs },
    'worker health and metrics listening',
  )
}
