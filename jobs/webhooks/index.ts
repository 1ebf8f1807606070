import type { Logger } from '../../common/logger.ts'
import type { Db } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { JobRunner, Processor } from '../runner.ts'
import { DEFAULT_WEBHOOK_OPTIONS, type DeliverJob, deliverWebhook, type WebhookOptions } from './deliver.ts'

export { DEFAULT_WEBHOOK_OPTIONS, type WebhookOptions } from './deliver.ts'
export { emitRedeemEvents } from './emit.ts'

/** Job names: the periodic dispatcher and one delivery attempt. */
export const WEBHOOK_JOBS = { dispatch: 'webhooks', deliver: 'webhook-deliver' } as const

/** How far ahead the dispatcher queues attempts (as delayed jobs), and how many per run. */
const DISPATCH_AHEAD_MS = 2_000
const DISPATCH_BATCH = 500

/**
 * The webhook processors. The dispatcher (periodic) queues one job per due delivery attempt, with the
 * stable id `webhook-<delivery>-<attempts so far>`, so a delivery is never queued twice for one attempt;
 * the delivery job sends it (deliver.ts).
 */
export function createWebhookJobs(deps: {
  db: Db
  logger: Logger
  options?: WebhookOptions | undefined
  runner: () => JobRunner
}): Record<string, Processor> {
  const repos = createRepos(deps.db)
  const logger = deps.logger.child({ component: 'webhooks' })
  return {
    [WEBHOOK_JOBS.dispatch]: async () => {
      const due = await repos.webhooks.due(DISPATCH_AHEAD_MS, DISPATCH_BATCH)
      const runner = deps.runner()
      for (const d of due) {
        const data: DeliverJob = { deliveryId: d.id, attempt: d.attempts }
        await runner.enqueue(WEBHOOK_JOBS.deliver, data, {
          jobId: `webhook-${d.id}-${d.attempts}`,
          ...(d.in_ms > 0 ? { delayMs: d.in_ms } : {}),
        })
      }
      return { queued: due.length }
    },
    [WEBHOOK_JOBS.deliver]: deliverWebhook({
      db: deps.db,
      logger,
      options: deps.options ?? DEFAULT_WEBHOOK_OPTIONS,
    }),
  }
}
