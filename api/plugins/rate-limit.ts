import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
import RedisStore from '@fastify/rate-limit/store/RedisStore.js'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { Redis } from 'ioredis'
import type { Config } from '../../common/config.ts'
import { rateLimitField, rateLimitPolicyField } from '../openapi/rate-limit-fields.ts'

/** Routes the rate limit never counts: liveness, readiness, the token signing keys. */
export const UNLIMITED_ROUTES = new Set(['/health', '/ready', '/.well-known/jwks.json'])

/** What a request is refused with once its client is over the limit (the app's error handler answers it). */
interface RateLimitExceeded {
  statusCode: 429
  message: string
}

/** The 429 of a client over `max` requests per `windowMs`, whose window restarts in `ttlMs`. */
function exceeded(max: number, windowMs: number, ttlMs: number): RateLimitExceeded {
  return {
    statusCode: 429,
    message:
      `rate limit exceeded: at most ${max} requests per ${windowMs / 1000} s; ` +
      `retry in ${Math.max(1, Math.ceil(ttlMs / 1000))} s`,
  }
}

/**
 * The limit of one route, as @fastify/rate-limit's own hook applies it (a preHandler after the route's own,
 * the same store, key, headers and 429), in a callback hook: the plugin's is an async function awaiting
 * the key, the allow list and the store in turn, ~5-10 µs a request in promises, microtasks and the
 * garbage they leave (measured with bench:api); with the store in memory, a request is counted with no
 * promise at all. Besides the plugin's legacy `X-RateLimit-*` headers (and `Retry-After` on a 429), the
 * fields of draft-ietf-httpapi-ratelimit-headers, `RateLimit-Policy` (`policy`) and `RateLimit`
 * (api/openapi/rate-limit-fields.ts): a 429 keeps them, the error handler answers with the reply's headers.
 */
function limitHook(store: FastifyRateLimitStore, max: number, windowMs: number) {
  const policy = rateLimitPolicyField(max, windowMs)
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const key = request.auth?.clientId ?? request.ip
    store.incr(
      key,
      (err, count) => {
        if (err || count === undefined) return done(err ?? new Error('the rate limit store answered nothing'))
        const resetSeconds = Math.ceil(count.ttl / 1000)
        const remaining = Math.max(0, max - count.current)
        reply.header('x-ratelimit-limit', max)
        reply.header('x-ratelimit-remaining', remaining)
        reply.header('x-ratelimit-reset', resetSeconds)
        reply.header('ratelimit-policy', policy)
        reply.header('ratelimit', rateLimitField(remaining, resetSeconds))
        if (count.current <= max) return done()
        reply.header('retry-after', resetSeconds)
        done(exceeded(max, windowMs, count.ttl) as unknown as Error)
      },
      windowMs,
      max,
    )
  }
}

/**
 * The global rate limit (per client id, else per address), counted in Redis when there is one. Routes
 * registered before it (/metrics, /docs) are not counted. @fastify/rate-limit keeps its store and makes the
 * limiters of `app.createRateLimit` (the auth failures' budget); each route's limit is `limitHook`, counting
 * in that store.
 *
 * @example
 * await registerRateLimit(app, { config, redis }) // the 601st call in a window: 429 IR1005
 */
export async function registerRateLimit(
  app: FastifyInstance,
  { config, redis }: { config: Config; redis?: Redis | undefined },
): Promise<void> {
  const max = Math.trunc(config.rateLimitMax)
  const windowMs = Math.trunc(config.rateLimitWindowMs)
  // the stores the plugin makes itself from these options (`redis` and `nameSpace`, else its memory)
  const store = redis ? new RedisStore(false, false, redis, 'lsreport-rl-') : new LocalStore(false, false)
  app.addHook('onRoute', (route) => {
    // liveness, readiness and key discovery answer whatever a neighbour's load: probes and verifiers share
    // an address with everyone behind a load balancer
    if (UNLIMITED_ROUTES.has(route.url)) route.config = { ...route.config, rateLimit: false }
    // a route of no limit (false); one of its own (an object: the plugin's hook, without the RateLimit
    // fields) is refused
    if (route.config?.rateLimit === false) return
    if (route.config?.rateLimit != null) {
      throw new Error(`${route.url}: a rate limit of its own is not supported (the limit is one per client)`)
    }
    const hooks = route.preHandler === undefined ? [] : [route.preHandler].flat()
    route.preHandler = [...hooks, limitHook(store, max, windowMs)]
  })
  await app.register(rateLimit, {
    // the routes' limits are the hooks above
    global: false,
    hook: 'preHandler',
    max,
    timeWindow: windowMs,
    // the plugin makes its store with `new`: a constructor returning an object gives that object
    store: function sharedStore() {
      return store
    } as unknown as FastifyRateLimitStoreCtor,
    keyGenerator: (request) => request.auth?.clientId ?? request.ip,
    errorResponseBuilder: (_request, context) => exceeded(context.max, windowMs, context.ttl),
  })
}
