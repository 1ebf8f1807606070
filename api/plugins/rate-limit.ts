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
 * The limit of one route, as @fastify/rate-limit's own hook applies it (the same store, key, headers and
 * 429), in a callback hook: the plugin's is an async function awaiting the key, the allow list and the store
 * in turn, ~5-10 µs a request in promises, microtasks and the garbage they leave (measured with bench:api);
 * with the store in memory, a request is counted with no promise at all. Besides the plugin's legacy
 * `X-RateLimit-*` headers (and `Retry-After` on a 429), the fields of draft-ietf-httpapi-ratelimit-headers,
 * `RateLimit-Policy` (`policy`) and `RateLimit` (api/openapi/rate-limit-fields.ts): a 429 keeps them, the
 * error handler answers with the reply's headers.
 *
 * It runs at `onRequest`, after the route's own onRequest hooks (the bearer check, which sets `request.auth`
 * from a verified token) and before the body is read, parsed or validated: every request a route receives is
 * counted, those its body or its parameters then refuse included, and one over the limit costs no parse.
 */
function limitHook(store: FastifyRateLimitStore, max: number, windowMs: number) {
  const policy = rateLimitPolicyField(max, windowMs)
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    store.incr(
      rateLimitKey(request),
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
 * A request's key in the rate limit: its client, once the route's bearer check has verified its token (a
 * claim read from an unverified token would let anyone spend another client's budget, or mint a budget per
 * forged subject), else its address (the socket's, or the one the TRUST_PROXY proxies forward). A request the
 * bearer check refuses never reaches the limit: it counts against its address's budget of requests refused by
 * authentication (api/auth/plugin.ts, the same size), 429 over it.
 */
function rateLimitKey(request: FastifyRequest): string {
  return request.auth?.clientId ?? request.ip
}

/**
 * The deployment's namespace of rate-limit keys in Redis, `<QUEUE_PREFIX>:rate-limit:`: deployments sharing a
 * Redis (which already need distinct QUEUE_PREFIXes for their queues) count apart.
 *
 * @example
 * rateLimitNamespace('lsreport-staging') // 'lsreport-staging:rate-limit:'
 */
export function rateLimitNamespace(queuePrefix: string): string {
  return `${queuePrefix}:rate-limit:`
}

/**
 * The store the limit counts in: Redis under the deployment's namespace when there is one, else memory. The
 * plugin's limiters (`app.createRateLimit`: the auth failures' budget) count in a `child` of it; the
 * plugin's RedisStore names a child after its route's method and URL, which such a limiter does not have
 * (the keys were `lsreport-rl-undefinedundefined-auth-refused-<address>`, in no deployment's namespace): a
 * child here counts in the same namespace (its keys carry their own prefix, `auth-refused-`).
 */
function createStore(redis: Redis | undefined, namespace: string): FastifyRateLimitStore {
  const store = redis ? new RedisStore(false, false, redis, namespace) : new LocalStore(false, false)
  // (the app's limiters neither extend a window past the limit nor back off: both flags false)
  store.child = () => (redis ? new RedisStore(false, false, redis, namespace) : new LocalStore(false, false))
  return store
}

/**
 * The global rate limit (per verified client, else per address: `rateLimitKey`), counted at `onRequest` of
 * every route and of the requests no route matched, in Redis when there is one (under
 * `rateLimitNamespace(QUEUE_PREFIX)`). Routes registered before it (/metrics, /docs) and UNLIMITED_ROUTES are
 * not counted. @fastify/rate-limit keeps the store and makes the limiters of `app.createRateLimit` (the auth
 * failures' budget); each route's limit is `limitHook`, counting in that store.
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
  const store = createStore(redis, rateLimitNamespace(config.queuePrefix))
  const limit = limitHook(store, max, windowMs)
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
    const hooks = route.onRequest === undefined ? [] : [route.onRequest].flat()
    route.onRequest = [...hooks, limit]
  })
  // a request no route matched (its body is read and parsed all the same) counts against its address
  app.addHook('onRequest', (request, reply, done) => (request.is404 ? limit(request, reply, done) : done()))
  await app.register(rateLimit, {
    // the routes' limits are the hooks above
    global: false,
    max,
    timeWindow: windowMs,
    // the plugin makes its store with `new`: a constructor returning an object gives that object
    store: function sharedStore() {
      return store
    } as unknown as FastifyRateLimitStoreCtor,
    keyGenerator: rateLimitKey,
    errorResponseBuilder: (_request, context) => exceeded(context.max, windowMs, context.ttl),
  })
}
