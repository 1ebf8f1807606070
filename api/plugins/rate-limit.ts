import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type { Config } from '../../common/config.ts'
import { sendRateLimitFields } from '../openapi/rate-limit-fields.ts'

/** Routes the rate limit never counts: liveness, readiness, the token signing keys. */
export const UNLIMITED_ROUTES = new Set(['/health', '/ready', '/.well-known/jwks.json'])

/**
 * The global rate limit (per client id, else per address), counted in Redis when there is one. Routes
 * registered before it (/metrics, /docs) are not counted.
 *
 * @example
 * await registerRateLimit(app, { config, redis }) // the 601st call in a window: 429 IR1005
 */
export async function registerRateLimit(
  app: FastifyInstance,
  { config, redis }: { config: Config; redis?: Redis | undefined },
): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    max: config.rateLimitMax,
    timeWindow: config.rateLimitWindowMs,
    ...(redis ? { redis, nameSpace: 'lsreport-rl-' } : {}),
    keyGenerator: (request) => request.auth?.clientId ?? request.ip,
    // liveness, readiness and key discovery answer whatever a neighbour's load: probes and verifiers share
    // an address with everyone behind a load balancer
    allowList: (request) => UNLIMITED_ROUTES.has(request.routeOptions.url ?? ''),
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      message:
        `rate limit exceeded: at most ${context.max} requests per ${config.rateLimitWindowMs / 1000} s; ` +
        `retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} s`,
    }),
  })
  sendRateLimitFields(app, { windowMs: config.rateLimitWindowMs })
}
