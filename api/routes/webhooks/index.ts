import type { FastifyInstance } from 'fastify'
import { type WebhookRouteDeps, webhookContext } from './context.ts'
import { deliveryRoutes } from './deliveries.ts'
import { subscriptionRoutes } from './subscriptions.ts'

/**
 * Signed webhooks of the caller's organization (/v1/webhooks): subscribe, list, delete, resume one the
 * circuit breaker paused, the delivery log and a replay. Another organization's webhook answers like an
 * unknown one. One file per route group; their schemas (schemas.ts), how they show what they read
 * (presenting.ts) and what they share (context.ts) beside them.
 */
export function webhookRoutes(app: FastifyInstance, deps: WebhookRouteDeps) {
  const ctx = webhookContext(app, deps)
  subscriptionRoutes(app, ctx)
  deliveryRoutes(app, ctx)
}
