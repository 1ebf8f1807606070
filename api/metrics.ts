import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { Counter, Histogram } from 'prom-client'
import { metricsTokenCheck, type ServiceMetrics } from '../metrics/index.ts'
import { ApiError } from './errors.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** This process's metrics (served on GET /metrics); `useQueue` binds an embedded runner. */
    metrics: ServiceMetrics
  }
}

/** HTTP methods kept as label values; any other is counted as OTHER (label values stay a small set). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** A request's method as a label value. */
const methodLabel = (method: string) => (METHODS.has(method) ? method : 'OTHER')

/** Latency buckets (seconds): a cached read is ~1 ms, a report over a large account ~1 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The latency histogram's labels. */
type LatencyLabels = { method: string; route: string; status_class: string }

/**
 * An onResponse hook observing the latency of the requests of one route (its template, or `unmatched`): the
 * labels of each method and status class it answered, looked up by the two (both a small set) rather than
 * worked out again on every request.
 */
function observeLatency(latency: Histogram<keyof LatencyLabels>, route: string) {
  const byMethod = new Map<string, (LatencyLabels | undefined)[]>()
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const method = request.method
    let byClass = byMethod.get(method)
    if (byClass === undefined) {
      byClass = []
      byMethod.set(method, byClass)
    }
    const statusClass = Math.floor(reply.statusCode / 100)
    let labels = byClass[statusClass]
    if (labels === undefined) {
      labels = { method: methodLabel(method), route, status_class: `${statusClass}xx` }
      byClass[statusClass] = labels
    }
    latency.observe(labels, reply.elapsedTime / 1000)
    done()
  }
}

/**
 * With METRICS_TOKEN set, a scrape's token is budgeted like the token endpoint's secrets: a wrong or missing
 * one counts against its address's budget of requests refused by authentication (`app.authFailures`, the
 * rate-limit store: RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS), and over it the address answers 429 IR1005
 * before its token is compared, even a right one. Throws the refusal; returns when the token is right.
 */
async function refuseWrongTokens(
  app: FastifyInstance,
  request: FastifyRequest,
  check: ReturnType<typeof metricsTokenCheck>,
): Promise<void> {
  const wait = await app.authFailures.blocked(request)
  if (wait !== undefined) throw app.authFailures.tooMany(wait)
  const authorized = check(request.headers.authorization)
  if (authorized === 'ok') return
  const retryAfter = await app.authFailures.record(request)
  if (retryAfter !== undefined) throw app.authFailures.tooMany(retryAfter)
  if (authorized === 'missing')
    throw new ApiError('IR2000', 'missing bearer token: send Authorization: Bearer <METRICS_TOKEN>')
  throw new ApiError('IR2001', 'invalid metrics token')
}

/**
 * GET /metrics (Prometheus text format, hidden from the OpenAPI document, not rate limited), onResponse
 * hooks (one per route, one for the requests no route matched) observing
 * `lsreport_http_request_duration_seconds{method, route, status_class}` and one
 * onRequestAbort hook counting `lsreport_http_requests_aborted_total{method, route}` (a client that closed
 * the connection before its answer: it has no status and no response time): the route is the template
 * (`/v0/platform/accounts/:key`), `unmatched` for a 404 without route, never the raw URL. Without `token`
 * the endpoint is public (like /health: keep the port off the internet or scrape through a private network);
 * with it, a scrape must send `Authorization: Bearer <token>`, and wrong tokens are budgeted per address
 * (`refuseWrongTokens`).
 *
 * @example
 * registerMetrics(app, { metrics, token: config.metricsToken })
 */
export function registerMetrics(
  app: FastifyInstance,
  options: { metrics: ServiceMetrics; token: string | undefined },
): void {
  const { metrics } = options
  app.decorate('metrics', metrics)
  const name = 'lsreport_http_request_duration_seconds'
  const latency =
    (metrics.registry.getSingleMetric(name) as Histogram<keyof LatencyLabels> | undefined) ??
    new Histogram({
      name,
      help: 'API request latency by route template, method and status class (this process)',
      labelNames: ['method', 'route', 'status_class'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [metrics.registry],
    })

  const abortedName = 'lsreport_http_requests_aborted_total'
  const aborted =
    (metrics.registry.getSingleMetric(abortedName) as Counter<'method' | 'route'> | undefined) ??
    new Counter({
      name: abortedName,
      help: 'API requests whose client closed the connection before they were answered (this process)',
      labelNames: ['method', 'route'] as const,
      registers: [metrics.registry],
    })

  // a hook of each route (its template known when it is registered: reading it on every request builds the
  // route's options anew each time), and one for the requests no route matched
  app.addHook('onRoute', (route) => {
    const hooks = route.onResponse === undefined ? [] : [route.onResponse].flat()
    route.onResponse = [...hooks, observeLatency(latency, route.url)]
  })
  const unmatched = observeLatency(latency, 'unmatched')
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) return unmatched(request, reply, done)
    done()
  })
  // an aborted request never reaches onResponse: counted apart
  app.addHook('onRequestAbort', (request: FastifyRequest, done: () => void) => {
    aborted.inc({ method: methodLabel(request.method), route: request.routeOptions.url ?? 'unmatched' })
    done()
  })

  const check = metricsTokenCheck(options.token)
  app.get('/metrics', { schema: { hide: true }, config: { rateLimit: false } }, async (request, reply) => {
    if (options.token !== undefined) await refuseWrongTokens(app, request, check)
    const text = await metrics.scrape()
    return reply.header('content-type', metrics.registry.contentType).send(text)
  })
}
