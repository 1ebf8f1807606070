import { type SharedCollector, sourceGauge } from './collector.ts'

interface DeliveryRow {
  status: string
  paused: boolean
  n: string | number
  oldest_seconds: string | number | null
}

interface SubscriptionRow {
  org_id: string
  paused: boolean
  n: string | number
}

/**
 * Webhook deliveries by outcome (`webhook_deliveries.status`), the age of the oldest pending one of an active
 * subscription, the subscriptions by status (active, paused by the circuit breaker) and, with
 * METRICS_TENANT_LABELS=1 only, the paused ones per organization.
 */
export const webhookDeliveriesCollector: SharedCollector = (scope) => {
  const load = scope.source('webhooks', async () => {
    const deliveries = await scope.db.raw<{ rows: DeliveryRow[] }>(
      `select d.status, w.paused_at is not null as paused, count(*) as n,
              extract(epoch from now() - min(d.created_at)) as oldest_seconds
         from webhook_deliveries d join webhooks w on w.id = d.webhook_id
        group by 1, 2`,
    )
    const subscriptions = await scope.db.raw<{ rows: SubscriptionRow[] }>(
      `select org_id, paused_at is not null as paused, count(*) as n from webhooks group by 1, 2`,
    )
    return { deliveries: deliveries.rows, subscriptions: subscriptions.rows }
  })
  sourceGauge(
    scope,
    {
      name: 'lsreport_webhook_deliveries',
      help: 'Webhook deliveries (one per event and subscription) by status: pending, succeeded, failed',
      labelNames: ['status'],
      load,
    },
    ({ deliveries }, set) => {
      const by = new Map(['pending', 'succeeded', 'failed'].map((s) => [s, 0]))
      for (const r of deliveries) by.set(r.status, (by.get(r.status) ?? 0) + Number(r.n))
      for (const [status, n] of by) set({ status }, n)
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_webhook_oldest_pending_seconds',
      help:
        'Age of the oldest pending webhook delivery of an active subscription (0 when none is pending; the ' +
        'deliveries of a paused subscription wait on purpose and are not counted)',
      labelNames: [],
      load,
    },
    ({ deliveries }, set) => {
      const ages = deliveries
        .filter((r) => r.status === 'pending' && !r.paused && r.oldest_seconds !== null)
        .map((r) => Number(r.oldest_seconds))
      set({}, ages.length === 0 ? 0 : Math.max(...ages))
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_webhook_subscriptions',
      help: 'Webhook subscriptions by status: active, paused (by the circuit breaker after consecutive failures)',
      labelNames: ['status'],
      load,
    },
    ({ subscriptions }, set) => {
      let paused = 0
      let active = 0
      for (const r of subscriptions) {
        if (r.paused) paused += Number(r.n)
        else active += Number(r.n)
      }
      set({ status: 'active' }, active)
      set({ status: 'paused' }, paused)
    },
  )
  // per organization only behind METRICS_TENANT_LABELS=1: by default /metrics names no tenant
  if (!scope.tenantLabels) return
  sourceGauge(
    scope,
    {
      name: 'lsreport_webhook_paused_subscriptions',
      help: 'Webhook subscriptions the circuit breaker paused, per organization (orgs with none are absent)',
      labelNames: ['org_id'],
      load,
    },
    ({ subscriptions }, set) => {
      for (const r of subscriptions) if (r.paused) set({ org_id: r.org_id }, Number(r.n))
    },
  )
}
