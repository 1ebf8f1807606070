import { Type } from 'typebox'
import { WEBHOOK_EVENT_TYPES } from '../../../db/repos/webhooks.ts'
import { Nullable, StringEnum } from '../../schemas.ts'

/** Request and response schemas of the webhook routes (api/routes/webhooks/). */

/** One event type a webhook can subscribe to. */
export const EventType = StringEnum(WEBHOOK_EVENT_TYPES)

/** A webhook as listed (never its secret). */
export const WebhookSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(EventType),
  description: Nullable('string'),
  created_at: Type.String({ format: 'date-time' }),
})

/** One webhook with its circuit breaker's state (GET /v1/webhooks/{id} and the resume's answer). */
export const WebhookDetailSchema = Type.Object({
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

/** A webhook just created: the only answer holding its signing secret. */
export const CreatedWebhookSchema = Type.Object({
  ...WebhookSchema.properties,
  secret: Type.String({
    description: 'whsec_<base64>: the signing secret, shown only in this answer (Standard Webhooks)',
  }),
})

/** One delivery of an event to a webhook, with its attempts so far. */
export const DeliverySchema = Type.Object({
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

/** The path of one webhook. */
export const WebhookId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })
