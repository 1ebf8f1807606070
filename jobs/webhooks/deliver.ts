import { ConfigError } from '../../common/errors.ts'
import type { Logger } from '../../common/logger.ts'
import { redactUrl } from '../../common/redact-url.ts'
import type { Db } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { BreakerPolicy } from '../../db/repos/webhooks.ts'
import { openWebhookSecret } from '../../db/webhook-secrets.ts'
import { WebhookUrlError } from '../../platform/webhooks/errors.ts'
import { resolveWebhookTarget } from '../../platform/webhooks/url-guard.ts'
import type { JobInfo } from '../runner.ts'
import { MAX_RETRY_DELAY_MS, retryDelayMs } from './backoff.ts'
import { type SendResult, sendWebhook } from './send.ts'
import { webhookHeaders } from './sign.ts'

/** How deliveries are made (from common/config.ts: WEBHOOK_* variables; the optional ones have defaults). */
export interface WebhookOptions {
  /** Deliver to loopback/private/link-local addresses too (WEBHOOK_ALLOW_PRIVATE=1). */
  allowPrivate: boolean
  /** Bound of one attempt, connection to answer (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number
  /** Bound of the TCP connection of an attempt (WEBHOOK_CONNECT_TIMEOUT_MS, 3 s). */
  connectTimeoutMs?: number | undefined
  /** Wait after the first failed attempt; doubled after each (WEBHOOK_RETRY_BASE_MS). */
  retryBaseMs: number
  /** How long a delivery is retried before it is marked failed (WEBHOOK_RETRY_WINDOW_MS, 24 h). */
  retryWindowMs: number
  /** Deliveries in flight at once per process (WEBHOOK_CONCURRENCY, 64). */
  concurrency?: number | undefined
  /** ...per organization (WEBHOOK_ORG_CONCURRENCY, 8) and per subscription (4). */
  orgConcurrency?: number | undefined
  webhookConcurrency?: number | undefined
  /** Consecutive failed attempts that pause a subscription (WEBHOOK_BREAKER_FAILURES, 10; 0: never)... */
  breakerFailures?: number | undefined
  /** ...failing for at least this long (WEBHOOK_BREAKER_MIN_MS, 60 s: a short outage does not pause). */
  breakerMinMs?: number | undefined
  /** Wait before a paused subscription's first probe, doubled after each failed one (WEBHOOK_BREAKER_PROBE_MS, 60 s). */
  breakerProbeMs?: number | undefined
}

/** The defaults: public addresses only, 10 s per attempt (3 s to connect), 10 s doubling, 24 h of retries. */
export const DEFAULT_WEBHOOK_OPTIONS = {
  allowPrivate: false,
  timeoutMs: 10_000,
  connectTimeoutMs: 3_000,
  retryBaseMs: 10_000,
  retryWindowMs: 24 * 60 * 60 * 1000,
  concurrency: 64,
  orgConcurrency: 8,
  webhookConcurrency: 4,
  breakerFailures: 10,
  breakerMinMs: 60_000,
  breakerProbeMs: 60_000,
} satisfies WebhookSettings

/** Every option, defaults filled in. */
export type WebhookSettings = { [K in keyof WebhookOptions]-?: Exclude<WebhookOptions[K], undefined> }

/** The options with every default filled in. */
export function webhookSettings(options: WebhookOptions | undefined): WebhookSettings {
  const defined = Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined))
  return { ...DEFAULT_WEBHOOK_OPTIONS, ...defined }
}

/**
 * What the delivery needs: the store, a logger, the options and the key the subscriptions' secrets are sealed
 * under (SIGNING_KEY_SECRET: `lsreport worker` and `up` read it when the first delivery needs it; absent, a
 * delivery errors with a message saying so).
 */
export interface WebhookDeliveryDeps {
  db: Db
  logger: Logger
  options: WebhookOptions
  sealingKey?: (() => Promise<Buffer>) | undefined
}

/** The sealing key of a process given none: every delivery errors, saying what is missing. */
async function noSealingKey(): Promise<Buffer> {
  throw new ConfigError(
    "no SIGNING_KEY_SECRET was given to the webhook deliveries: the subscriptions' secrets are sealed under it",
  )
}

/** The payload of a delivery job: the delivery and the attempt count it had when it was queued. */
export interface DeliverJob {
  deliveryId: string
  attempt: number
}

/** What one call of the delivery did. */
export type DeliveryOutcome = { skipped: true } | { delivered: boolean; attempts: number }

/**
 * One delivery attempt: claims it (the next one is scheduled before anything is sent, so a crash while
 * sending is retried with the same webhook-id), checks the URL again after resolving it, signs and POSTs the
 * event, then records the outcome: succeeded on a 2xx, else retried with backoff until the retry window
 * ends (then failed). An attempt already claimed, or one of a paused subscription that is not its probe,
 * does nothing. Each outcome counts on the subscription's circuit breaker: `breakerFailures` failures in a
 * row (over at least `breakerMinMs`) pause it; a paused subscription's deliveries wait (never failed for the
 * retry window while it is paused) and one of them is its probe: a success resumes it.
 */
export function deliverOnce(deps: WebhookDeliveryDeps) {
  const sealingKey = deps.sealingKey ?? noSealingKey
  const repos = createRepos(deps.db)
  const options = webhookSettings(deps.options)
  const policy: BreakerPolicy = {
    failures: options.breakerFailures,
    minMs: options.breakerMinMs,
    probeMs: options.breakerProbeMs,
    maxProbeMs: MAX_RETRY_DELAY_MS,
  }
  return async (deliveryId: string, attempt: number, probe = false): Promise<DeliveryOutcome> => {
    const n = attempt + 1
    // a claim outlives an attempt in flight: no second attempt starts while this one may still answer
    const claimFor = Math.max(retryDelayMs(n, options.retryBaseMs), options.timeoutMs + 1_000)
    const work = await repos.webhooks.claim(deliveryId, attempt, claimFor, { probe })
    if (!work) return { skipped: true }
    const paused = work.paused_at !== null
    let result: SendResult
    try {
      const target = await resolveWebhookTarget(work.url, { allowPrivate: options.allowPrivate })
      if (!target) throw new WebhookUrlError(`the webhook host of ${redactUrl(work.url)} does not resolve`)
      // the secret is stored sealed: a key that does not open it throws (logged; the claim expires, retried)
      const secret = openWebhookSecret(await sealingKey(), work.webhook_id, work.secret)
      result = await sendWebhook(
        target,
        webhookHeaders(secret, work.event_id, work.body),
        work.body,
        options.timeoutMs,
        options.connectTimeoutMs,
      )
    } catch (err) {
      if (!(err instanceof WebhookUrlError)) throw err
      result = { error: err.message }
    }
    const statusCode = 'statusCode' in result ? result.statusCode : null
    const log = {
      delivery_id: deliveryId,
      event_id: work.event_id,
      webhook_id: work.webhook_id,
      org_id: work.org_id,
    }
    if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
      await repos.webhooks.record(deliveryId, n, { status: 'succeeded', statusCode, error: null })
      const breaker = await repos.webhooks.countOutcome(work.webhook_id, true, policy, probe)
      if (breaker.resumed) deps.logger.info({ ...log, probe }, 'webhook subscription resumed by a delivery')
      return { delivered: true, attempts: n }
    }
    const error =
      'error' in result
        ? result.error
        : statusCode !== null && statusCode >= 300 && statusCode < 400
          ? `HTTP ${statusCode}: redirects are not followed`
          : `HTTP ${statusCode}`
    const wait = retryDelayMs(n, options.retryBaseMs)
    // while its subscription is paused a delivery waits: the pause does not count in its retry window
    const givenUp = !paused && Date.now() + wait > work.window_started_at.getTime() + options.retryWindowMs
    await repos.webhooks.record(deliveryId, n, {
      status: givenUp ? 'failed' : 'pending',
      statusCode,
      error,
      retryInMs: wait,
    })
    const breaker = await repos.webhooks.countOutcome(work.webhook_id, false, policy, probe)
    deps.logger.warn(
      {
        ...log,
        attempts: n,
        error,
        gave_up: givenUp,
        probe,
        consecutive_failures: breaker.consecutiveFailures,
      },
      'webhook delivery attempt failed',
    )
    if (breaker.tripped) {
      deps.logger.warn(
        { ...log, consecutive_failures: breaker.consecutiveFailures, probe_in_ms: policy.probeMs },
        'webhook subscription paused by its circuit breaker',
      )
    }
    return { delivered: false, attempts: n }
  }
}

/**
 * The delivery job (`webhook-deliver`, payload `DeliverJob`): one attempt (`deliverOnce`). The dispatcher
 * runs attempts in its lanes (index.ts); the job remains for jobs queued by earlier versions and for tools.
 */
export function deliverWebhook(deps: WebhookDeliveryDeps) {
  const deliver = deliverOnce(deps)
  return async (job: JobInfo) => {
    const { deliveryId, attempt } = job.data as DeliverJob
    return deliver(deliveryId, attempt)
  }
}
