import type { FastifyInstance } from 'fastify'

/**
 * The rate limit in the fields of draft-ietf-httpapi-ratelimit-headers (structured-field form): every answer
 * that @fastify/rate-limit counted (its legacy `X-RateLimit-*` headers are there) also gets
 * `RateLimit-Policy: "default";q=<requests>;w=<seconds>` and `RateLimit: "default";r=<left>;t=<seconds>`,
 * a 429 included. The legacy headers stay. Declared in the OpenAPI document (api/openapi/headers.ts).
 */

/** The name of the one quota policy (one limit per client). */
export const RATE_LIMIT_POLICY = 'default'

/**
 * The RateLimit-Policy field of a quota of `quota` requests per `windowMs` (in whole seconds, rounded up).
 *
 * @example
 * rateLimitPolicyField(100, 60_000) // '"default";q=100;w=60'
 */
export function rateLimitPolicyField(quota: number, windowMs: number): string {
  return `"${RATE_LIMIT_POLICY}";q=${quota};w=${Math.ceil(windowMs / 1000)}`
}

/**
 * The RateLimit field: `remaining` requests left, the window restarts in `resetSeconds`.
 *
 * @example
 * rateLimitField(42, 17) // '"default";r=42;t=17'
 */
export function rateLimitField(remaining: number, resetSeconds: number): string {
  return `"${RATE_LIMIT_POLICY}";r=${remaining};t=${resetSeconds}`
}

/** A header's value as a non-negative integer, else undefined. */
function count(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined
}

/**
 * Adds RateLimit-Policy and RateLimit to every answer the rate limit counted, from the counts it wrote in its
 * legacy headers. Register it with the rate limit, before the routes.
 *
 * @example
 * sendRateLimitFields(app, { windowMs: config.rateLimitWindowMs })
 */
export function sendRateLimitFields(app: FastifyInstance, { windowMs }: { windowMs: number }): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    const limit = count(reply.getHeader('x-ratelimit-limit'))
    const remaining = count(reply.getHeader('x-ratelimit-remaining'))
    const reset = count(reply.getHeader('x-ratelimit-reset'))
    if (limit !== undefined && remaining !== undefined && reset !== undefined) {
      reply.header('ratelimit-policy', rateLimitPolicyField(limit, windowMs))
      reply.header('ratelimit', rateLimitField(remaining, reset))
    }
    done(null, payload)
  })
}
