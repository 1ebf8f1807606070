import { type SharedCollector, sourceGauge } from './collector.ts'

interface DeliveryRow {
  status: string
  n: string | number
  oldest_seconds: string | number | null
}

/** Webhook deliveries by outcome (`webhook_deliveries.status`) and the age of the oldest pending one. */
export const webhookDeliveriesCollector: SharedCollector = (scope) => {
  const load = scope.source('webhooks', async () => {
    const result = await scope.db.raw<{ rows: DeliveryRow[] }>(
      `select status, count(*) as n,
              extract(epoch from now() - min(created_at)) as oldest_seconds
         from webhook_deliveries group by status`,
    )
    return result.rows
  })
  sourceGauge(
    scope,
    {
      name: 'lsreport_webhook_deliveries',
      help: 'Webhook deliveries (one per event and subscription) by status: pending, succeeded, failed',
      labelNames: ['status'],
      load,
    },
    (rows, set) => {
      for (const status of ['pending', 'succeeded', 'failed']) set({ status }, 0)
      for (const r of rows) set({ status: r.status }, Number(r.n))
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_webhook_oldest_pending_seconds',
      help: 'Age of the oldest pending webhook delivery (0 when none is pending)',
      labelNames: [],
      load,
    },
    (rows, set) => {
      const oldest = rows.find((r) => r.status === 'pending')?.oldest_seconds
      set({}, oldest === null || oldest === undefined ? 0 : Number(oldest))
    },
  )
}
