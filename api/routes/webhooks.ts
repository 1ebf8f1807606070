import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../../db/repos/index.ts'
import {
  type DeliveryRow,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
  type WebhookRow,
} from '../../db/repos/webhooks.ts'
import { WebhookUrlError } from '../../platform/webhooks/errors.ts'
import { resolveWebhookTarget } from '../../platform/webhooks/url-guard.ts'
import { caller } from '../auth/plugin.ts'
import { ApiError } from '../errors.ts'
import { errorResponses, Nullable, PageQueryFields, pageOf, StringEnum } from '../schemas.ts'

const EventType = StringEnum(WEBHOOK_EVENT_TYPES)

const WebhookSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(EventType),
  description: Nullable('string'),
  created_at: Type.String({ format: 'date-time' }),
})

/** One webhook with its circuit breaker's state (GET /v1/webhooks/{id} and the resume's answer). */
const WebhookDetailSchema = Type.Object({
  ...WebhookSchema.properties,
  status: StringEnum(['active', 'paused'] as const, {
    description:
      'paused: the circuit breaker stopped sending after consecutive failures; deliveries wait (pending) ' +
      'until a probe succeeds or POST /v1/webhooks/{id}/resume',
  }),
  paused_at: Nullable('string', { format: 'date-time' }),
  consecutive_failures: Type.Integer({
    minimum: 0,
    description: 'failed attempts in a row (0 after a success)',
  }),
  next_probe_at: Nullable('string', {
    format: 'date-time',
    description: 'while paused: when one waiting delivery is tried again (a success resumes the webhook)',
  }),
})

const CreatedWebhookSchema = Type.Object({
  ...WebhookSchema.properties,
  secret: Type.String({
    description: 'whsec_<base64>: the signing secret, shown only in this answer (Standard Webhooks)',
  }),
})

const DeliverySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  event_id: Type.String({ description: 'the webhook-id header of every attempt of this event' }),
  type: EventType,
  status: StringEnum(['pending', 'succeeded', 'failed'] as const),
  attempts: Type.Integer(),
  last_status_code: Nullable('integer'),
  last_error: Nullable('string'),
  last_attempt_at: Nullable('string', { format: 'date-time' }),
  next_attempt_at: Nullable('string', { format: 'date-time', description: 'null once delivered or failed' }),
  delivered_at: Nullable('string', { format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
})

const WebhookId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

function webhookJson(w: WebhookRow) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    description: w.description,
    created_at: w.created_at.toISOString(),
  }
}

function webhookDetailJson(w: WebhookRow) {
  return {
    ...webhookJson(w),
    status: w.paused_at ? ('paused' as const) : ('active' as const),
    paused_at: w.paused_at?.toISOString() ?? null,
    consecutive_failures: w.consecutive_failures,
    next_probe_at: w.paused_at ? (w.next_probe_at?.toISOString() ?? null) : null,
  }
}

function deliveryJson(d: DeliveryRow) {
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

/**
 * Signed webhooks of the caller's organization (/v1/webhooks): subscribe, list, delete, resume one the
 * circuit breaker paused, the delivery log and a replay. Another organization's webhook answers like an unknown one.
 */
export function webhookRoutes(app: FastifyInstance, deps: { repos: Repos; allowPrivate: boolean }) {
  const { repos } = deps
  const read = { onRequest: app.requireScope('read:platform') }
  const write = { onRequest: app.requireScope('write:platform') }
  const tags = ['webhooks']

  const find = async (orgId: string, id: string) => {
    const webhook = await repos.webhooks.get(orgId, id)
    if (!webhook) throw new ApiError('IR3600', `webhook ${JSON.stringify(id)} not found`)
    return webhook
  }

  app.post(
    '/v1/webhooks',
    {
      ...write,
      schema: {
        tags,
        summary: 'Subscribe a URL to events (the answer holds the signing secret, shown only here)',
        body: Type.Object(
          {
            url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL of the receiver' }),
            events: Type.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length }),
            description: Type.Optional(Type.String({ maxLength: 500 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedWebhookSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const body = request.body as { url: string; events: WebhookEventType[]; description?: string }
      try {
        await resolveWebhookTarget(body.url, { allowPrivate: deps.allowPrivate, strictDns: false })
      } catch (err) {
        if (err instanceof WebhookUrlError) throw new ApiError('IR3601', err.message)
        throw err
      }
      const webhook = await repos.webhooks.create({
        orgId: caller(request).orgId,
        url: body.url,
        events: [...new Set(body.events)],
        description: body.description ?? null,
      })
      return reply.code(201).send({ ...webhookJson(webhook), secret: webhook.secret })
    },
  )

  app.get(
    '/v1/webhooks',
    {
      ...read,
      schema: {
        tags,
        summary: "The organization's webhooks (without their secrets; paged, X-Total-Count gives the total)",
        querystring: Type.Object(PageQueryFields),
        response: { 200: Type.Array(WebhookSchema), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query as { offset?: number; limit?: number })
      const { rows, total } = await repos.webhooks.list(caller(request).orgId, page)
      reply.header('x-total-count', String(total))
      return rows.map(webhookJson)
    },
  )

  app.get(
    '/v1/webhooks/:id',
    {
      ...read,
      schema: {
        tags,
        summary:
          'One webhook (without its secret), with its delivery state: active, or paused by the circuit breaker',
        params: WebhookId,
        response: { 200: WebhookDetailSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      return webhookDetailJson(await find(caller(request).orgId, id))
    },
  )

  app.delete(
    '/v1/webhooks/:id',
    {
      ...write,
      schema: {
        tags,
        summary: 'Delete a webhook: nothing more is sent to it, its delivery log goes with it',
        params: WebhookId,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string }
      if (!(await repos.webhooks.remove(caller(request).orgId, id)))
        throw new ApiError('IR3600', `webhook ${JSON.stringify(id)} not found`)
      return reply.code(204).send()
    },
  )

  app.post(
    '/v1/webhooks/:id/resume',
    {
      ...write,
      schema: {
        tags,
        summary:
          'Resume a webhook the circuit breaker paused: its waiting deliveries are sent now (idempotent)',
        params: WebhookId,
        response: { 200: WebhookDetailSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      const webhook = await repos.webhooks.resume(caller(request).orgId, id)
      if (!webhook) throw new ApiError('IR3600', `webhook ${JSON.stringify(id)} not found`)
      return webhookDetailJson(webhook)
    },
  )

  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      ...read,
      schema: {
        tags,
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
