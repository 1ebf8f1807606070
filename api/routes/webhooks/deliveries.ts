import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { ImpersonateHeaders } from '../../auth/impersonation.ts'
import { caller } from '../../auth/plugin.ts'
import { ApiError } from '../../errors.ts'
import { errorResponses, PageQueryFields, pageOf } from '../../schemas.ts'
import type { WebhookContext } from './context.ts'
import { deliveryJson } from './presenting.ts'
import { DeliverySchema, WebhookId } from './schemas.ts'

/** GET /v1/webhooks/:id/deliveries (the delivery log) and POST …/deliveries/:deliveryId/replay. */
export function deliveryRoutes(app: FastifyInstance, ctx: WebhookContext) {
  const { repos, read, write, tags, find } = ctx

  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      ...read,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: "A webhook's delivery log, newest first",
        params: WebhookId,
        querystring: Type.Object(PageQueryFields),
        response: { 200: Type.Array(DeliverySchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      const q = request.query as { offset?: number; limit?: number }
      const webhook = await find(caller(request).orgId, id)
      const rows = await repos.webhooks.deliveries(webhook.id, pageOf(q))
      return rows.map(deliveryJson)
    },
  )

  app.post(
    '/v1/webhooks/:id/deliveries/:deliveryId/replay',
    {
      ...write,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: 'Send a delivery again, with the same webhook-id (a fresh 24 h of retries)',
        params: Type.Object({
          id: Type.String({ minLength: 1, maxLength: 64 }),
          deliveryId: Type.String({ minLength: 1, maxLength: 64 }),
        }),
        response: { 202: DeliverySchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { id, deliveryId } = request.params as { id: string; deliveryId: string }
      const webhook = await find(caller(request).orgId, id)
      const delivery = await repos.webhooks.replay(webhook.id, deliveryId)
      if (!delivery) throw new ApiError('IR3602', `delivery ${JSON.stringify(deliveryId)} not found`)
      return reply.code(202).send(deliveryJson(delivery))
    },
  )
}
