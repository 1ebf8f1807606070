/**
 * The rate limit in the fields of draft-ietf-httpapi-ratelimit-headers (structured-field form): every answer
 * the rate limit counted (api/plugins/rate-limit.ts: its legacy `X-RateLimit-*` headers are there) also gets
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
