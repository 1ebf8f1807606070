import type { Logger } from '../../common/logger.ts'
import type { Db } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { JobInfo } from '../runner.ts'
import { retryDelayMs } from './backoff.ts'
import { WebhookUrlError } from './errors.ts'
import { type SendResult, sendWebhook } from './send.ts'
import { webhookHeaders } from './sign.ts'
import { resolveWebhookTarget } from './url-guard.ts'

/** How deliveries are made (from common/config.ts: WEBHOOK_* variables). */
export interface WebhookOptions {
  /** Deliver to loopback/private/link-local addresses too (WEBHOOK_ALLOW_PRIVATE=1). */
  allowPrivate: boolean
  /** Bound of one attempt, connection to answer (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number
  /** Wait after the first failed attempt; doubled after each (WEBHOOK_RETRY_BASE_MS). */
  retryBaseMs: number
  /** How long a delivery is retried before it is marked failed (WEBHOOK_RETRY_WINDOW_MS, 24 h). */
  retryWindowMs: number
}

/** The defaults: public addresses only, 10 s per attempt, 10 s doubling, 24 h of retries. */
export const DEFAULT_WEBHOOK_OPTIONS: WebhookOptions = {
  allowPrivate: false,
  timeoutMs: 10_000,
  retryBaseMs: 10_000,
  retryWindowMs: 24 * 60 * 60 * 1000,
}

/** The payload of a delivery job: the delivery and the attempt count it had when it was queued. */
export interface DeliverJob {
  deliveryId: string
  attempt: number
}

/**
 * The delivery job: claims the attempt (the next one is scheduled before anything is sent, so a crash while
 * sending is retried with the same webhook-id), checks the URL again after resolving it, signs and POSTs the
 * event, then records the outcome: succeeded on a 2xx, else retried with backoff until the retry window
 * ends (then failed). A job for an attempt already claimed does nothing.
 */
export function deliverWebhook(deps: { db: Db; logger: Logger; options: WebhookOptions }) {
  const repos = createRepos(deps.db)
  const { options } = deps
  return async (job: JobInfo) => {
    const { deliveryId, attempt } = job.data as DeliverJob
    const n = attempt + 1
    // a claim outlives an attempt in flight: no second attempt starts while this one may still answer
    const claimFor = Math.max(retryDelayMs(n, options.retryBaseMs), options.timeoutMs + 1_000)
    const work = await repos.webhooks.claim(deliveryId, attempt, claimFor)
    if (!work) return { skipped: true }
    let result: SendResult
    try {
      const target = await resolveWebhookTarget(work.url, { allowPrivate: options.allowPrivate })
      if (!target) throw new WebhookUrlError(`the webhook host of ${work.url} does not resolve`)
      result = await sendWebhook(
        target,
        webhookHeaders(work.secret, work.event_id, work.body),
        work.body,
        options.timeoutMs,
      )
    } catch (err) {
      if (!(err instanceof WebhookUrlError)) throw err
      result = { error: err.message }
    }
    const statusCode = 'statusCode' in result ? result.statusCode : null
    if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
      await repos.webhooks.record(deliveryId, n, { status: 'succeeded', statusCode, error: null })
      return { delivered: true, attempts: n }
    }
    const error =
      'error' in result
        ? result.error
        : statusCode !== null && statusCode >= 300 && statusCode < 400
          ? `HTTP ${statusCode}: redirects are not followed`
          : `HTTP ${statusCode}`
    const wait = retryDelayMs(n, options.retryBaseMs)
    const givenUp = Date.now() + wait > work.window_started_at.getTime() + options.retryWindowMs
    await repos.webhooks.record(deliveryId, n, {
      status: givenUp ? 'failed' : 'pending',
      statusCode,
      error,
      retryInMs: wait,
    })
    deps.logger.warn(
      { delivery_id: deliveryId, event_id: work.event_id, attempts: n, error, gave_up: givenUp },
      'webhook delivery attempt failed',
    )
    return { delivered: false, attempts: n }
  }
}
