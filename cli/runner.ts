import {
  createBullRunner,
  createInlineRunner,
  type InlineConcurrency,
  type JobRunner,
  type Processor,
} from '../jobs/runner.ts'
import type { Context } from './context.ts'

/**
 * The job runner of a command: BullMQ on `REDIS_URL` (its prefix, concurrency and lock time from the
 * config), else the inline runner in this process with `inlineConcurrency` (the day's shard jobs).
 *
 * @example
 * const runner = buildRunner(ctx, jobs.processors, jobs.inlineConcurrency)
 */
export function buildRunner(
  ctx: Context,
  processors: Record<string, Processor>,
  inlineConcurrency: InlineConcurrency,
): JobRunner {
  const { config, logger } = ctx
  return config.redisUrl
    ? createBullRunner(processors, {
        redisUrl: config.redisUrl,
        prefix: config.queuePrefix,
        concurrency: config.workerConcurrency,
        lockMs: config.jobLockMs,
        logger,
      })
    : createInlineRunner(processors, logger, inlineConcurrency)
}
