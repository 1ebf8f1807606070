import type { DeliveryRow, WebhookRow } from '../../../db/repos/webhooks.ts'

/** A stored webhook as the API shows it (WebhookSchema: never its secret). */
export function webhookJson(w: WebhookRow) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    description: w.description,
    created_at: w.created_at.toISOString(),
  }
}

/** A stored webhook with its circuit breaker's state (WebhookDetailSchema). */
export function webhookDetailJson(w: WebhookRow) {
  return {
    ...webhookJson(w),
    status: w.paused_at ? ('paused' as const) : ('active' as const),
    paused_at: w.paused_at?.toISOString() ?? null,
    consecutive_failures: w.consecutive_failures,
    next_probe_at: w.paused_at ? (w.next_probe_at?.toISOString() ?? null) : null,
  }
}

/** A stored delivery as the API shows it (DeliverySchema: no next attempt once delivered or failed). */
export function deliveryJson(d: DeliveryRow) {
  return {
    id: d.id,
    event_id: d.event_id,
    type: d.type,
    status: d.status,
    attempts: d.attempts,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    last_attempt_at: d.last_attempt_at?.toISOString() ?? null,
    next_attempt_at: d.status === 'pending' ? (d.next_attempt_at?.toISOString() ?? null) : null,
    delivered_at: d.delivered_at?.toISOString() ?? null,
    created_at: d.created_at.toISOString(),
  }
}
