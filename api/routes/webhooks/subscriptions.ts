import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { newWebhookSecret, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../../db/repos/webhooks.ts'
import { sealWebhookSecret } from '../../../db/webhook-secrets.ts'
import { WebhookUrlError } from '../../../platform/webhooks/errors.ts'
import { resolveWebhookTarget } from '../../../platform/webhooks/url-guard.ts'
import { ImpersonateHeaders } from '../../auth/impersonation.ts'
import { caller } from '../../auth/plugin.ts'
import { ApiError } from '../../errors.ts'
import { errorResponses, PageQueryFields, pageOf, sendPage } from '../../schemas.ts'
import type { WebhookContext } from './context.ts'
import { webhookDetailJson, webhookJson } from './presenting.ts'
import { CreatedWebhookSchema, EventType, WebhookDetailSchema, WebhookId, WebhookSchema } from './schemas.ts'

/** POST and GET /v1/webhooks, GET and DELETE /v1/webhooks/:id, POST /v1/webhooks/:id/resume. */
export function subscriptionRoutes(app: FastifyInstance, ctx: WebhookContext) {
  const { repos, read, write, tags, find } = ctx

  app.post(
    '/v1/webhooks',
    {
      ...write,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: 'Subscribe a URL to events (the answer holds the signing secret, shown only here)',
        description:
          'An organization has at most MAX_WEBHOOKS_PER_ORG webhooks (default 25): past it, 400 IR3700 names the ' +
          'limit. The signing secret is stored sealed (AES-256-GCM under SIGNING_KEY_SECRET).',
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
        await resolveWebhookTarget(body.url, { allowPrivate: ctx.allowPrivate, strictDns: false })
      } catch (err) {
        if (err instanceof WebhookUrlError) throw new ApiError('IR3601', err.message)
        throw err
      }
      const id = randomUUID()
      const secret = newWebhookSecret()
      const webhook = await repos.webhooks.create({
        id,
        orgId: caller(request).orgId,
        url: body.url,
        events: [...new Set(body.events)],
        description: body.description ?? null,
        // stored sealed: the answer is the only place the secret is ever shown in the clear
        secret: sealWebhookSecret(await ctx.sealingKey(), id, secret),
        limit: ctx.maxWebhooks,
      })
      return reply.code(201).send({ ...webhookJson(webhook), secret })
    },
  )

  app.get(
    '/v1/webhooks',
    {
      ...read,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: "The organization's webhooks (without their secrets; paged, X-Total-Count gives the total)",
        querystring: Type.Object(PageQueryFields),
        response: { 200: Type.Array(WebhookSchema), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query as { offset?: number; limit?: number })
      return sendPage(reply, await repos.webhooks.list(caller(request).orgId, page), webhookJson)
    },
  )

  app.get(
    '/v1/webhooks/:id',
    {
      ...read,
      schema: {
        tags,
        headers: ImpersonateHeaders,
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
        headers: ImpersonateHeaders,
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
        headers: ImpersonateHeaders,
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
}
