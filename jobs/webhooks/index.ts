import type { Logger } from '../../common/logger.ts'
import type { Db } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { JobRunner, Processor } from '../runner.ts'
import { deliverOnce, deliverWebhook, type WebhookOptions, webhookSettings } from './deliver.ts'
import { createDeliveryLanes, type LaneTask } from './lanes.ts'

export {
  DEFAULT_WEBHOOK_OPTIONS,
  type WebhookOptions,
  webhookSettings,
} from './deliver.ts'
export { emitRedeemEvents } from './emit.ts'

/** Job names: the periodic dispatcher and one delivery attempt. */
export const WEBHOOK_JOBS = { dispatch: 'webhooks', deliver: 'webhook-deliver' } as const

/** A dispatch pass takes at most this many due deliveries per subscription, and this many in all. */
export const DISPATCH_PER_WEBHOOK = 20
const DISPATCH_BATCH = 1_000
/** Paused subscriptions probed per pass. */
const PROBE_BATCH = 100

/**
 * The webhook processors. The dispatcher (periodic, every second) hands due deliveries to this process's
 * delivery lanes (lanes.ts): at most DISPATCH_PER_WEBHOOK per subscription per pass, oldest first and
 * round-robin across subscriptions, then run with a concurrency per organization and per subscription, so
 * one tenant's hanging receivers never hold another tenant's deliveries. The pass does not wait for the
 * attempts: it returns at once, on the inline runner and under BullMQ alike, so no job slot is held by a
 * slow receiver. Paused subscriptions (circuit breaker) get their probe here when it is due. Each attempt is
 * claimed in the database before it is sent (deliver.ts), so a process that dies mid-attempt leaves it to
 * be retried, with the same webhook-id, by any other.
 */
export function createWebhookJobs(deps: {
  db: Db
  logger: Logger
  options?: WebhookOptions | undefined
  /** The key the subscriptions' secrets are sealed under (SIGNING_KEY_SECRET; `WebhookDeliveryDeps`). */
  sealingKey?: (() => Promise<Buffer>) | undefined
  /** The runner (unused by the lanes; kept for the callers that bind one). */
  runner: () => JobRunner
}): { processors: Record<string, Processor>; drain: () => Promise<void> } {
  const repos = createRepos(deps.db)
  const logger = deps.logger.child({ component: 'webhooks' })
  const options = webhookSettings(deps.options)
  const deliveryDeps = { db: deps.db, logger, options, sealingKey: deps.sealingKey }
  const deliver = deliverOnce(deliveryDeps)
  const lanes = createDeliveryLanes(
    {
      concurrency: options.concurrency,
      perOrg: options.orgConcurrency,
      perWebhook: options.webhookConcurrency,
      staleMs: 5_000,
    },
    // the attempt was claimed: it is retried after its claim expires (at least once, same webhook-id)
    (err, task) => logger.error({ err, task: task.key }, 'webhook delivery attempt errored'),
  )
  const task = (d: { id: string; attempts: number; webhook_id: string; org_id: string }, probe: boolean) =>
    ({
      key: `${probe ? 'probe-' : ''}${d.id}-${d.attempts}`,
      org: d.org_id,
      webhook: d.webhook_id,
      run: async () => {
        await deliver(d.id, d.attempts, probe)
      },
    }) satisfies LaneTask
  const processors: Record<string, Processor> = {
    [WEBHOOK_JOBS.dispatch]: async () => {
      const probes = await repos.webhooks.takeProbes(PROBE_BATCH, options.timeoutMs + 1_000)
      for (const p of probes) lanes.offer(task(p, true))
      const due = await repos.webhooks.due(DISPATCH_PER_WEBHOOK, DISPATCH_BATCH)
      let offered = 0
      for (const d of due) if (lanes.offer(task(d, false))) offered += 1
      const { queued, running } = lanes.size()
      return { offered, probes: probes.length, queued, running }
    },
    [WEBHOOK_JOBS.deliver]: deliverWebhook(deliveryDeps),
  }
  // at shutdown (after the runner stopped dispatching): attempts in flight finish, queued ones stay pending in
  // the database for the next process
  return { processors, drain: () => lanes.drain({ dropQueued: true }) }
}
