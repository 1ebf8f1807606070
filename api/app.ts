import { randomUUID } from 'node:crypto'
import formbody from '@fastify/formbody'
import rateLimit from '@fastify/rate-limit'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
} from 'fastify'
import type { Redis } from 'ioredis'
import type { Config } from '../common/config.ts'
import type { Logger } from '../common/logger.ts'
import { type Db, isConnectionLoss } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { createServiceMetrics, type ServiceMetrics } from '../metrics/index.ts'
import { createPlatformService } from '../platform/service.ts'
import { createAnswerMemo } from './answer-memo.ts'
import type { SigningKey } from './auth/keys.ts'
import { authPlugin } from './auth/plugin.ts'
import { ApiError, apiErrorOf, type ErrorBody, type ErrorCode } from './errors.ts'
import { duplicateJsonKey } from './json-body.ts'
import { registerMetrics } from './metrics.ts'
import { AccessLog, logAbortedRequests } from './request-log.ts'
import { adminRoutes } from './routes/admin.ts'
import { discountRoutes } from './routes/discounts.ts'
import { feeRoutes } from './routes/fees.ts'
import { healthRoutes } from './routes/health.ts'
import { oauthRoutes } from './routes/oauth.ts'
import { platformRoutes } from './routes/platform/index.ts'
import { projectionRoutes } from './routes/projections.ts'
import { redeemRoutes } from './routes/redeems.ts'
import { reportVersionRoutes } from './routes/report-versions.ts'
import { rewardRoutes } from './routes/rewards/index.ts'
import { solRoutes } from './routes/sol.ts'
import { webhookRoutes } from './routes/webhooks.ts'
import { coerceBySchema, ErrorBodySchema, SAFE_REQUEST_ID, unboundedNumbers, unsafeInput } from './schemas.ts'

/** What the API needs: built once by the entrypoint. */
export interface ApiContext {
  config: Config
  logger: Logger
  db: Db
  signingKey: SigningKey
  /** Redis for the shared rate-limit store; absent: in-memory store. */
  redis?: Redis | undefined
  /** This process's metrics (the embedded start shares them with its jobs); absent: built from the config. */
  metrics?: ServiceMetrics | undefined
}

/** The longest path segment (an account key of 256 characters, percent-encoded, fits). */
const MAX_PARAM_LENGTH = 2400

function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { message, status: code }
}

/** Maps any thrown error to the catalog: `{http, body, headers}`. Internal errors never leak. */
export function toErrorReply(err: unknown): {
  http: number
  body: ErrorBody
  headers: Record<string, string>
} {
  const domain = apiErrorOf(err)
  if (domain) return toErrorReply(domain)
  if (err instanceof ApiError)
    return { http: err.http, body: errorBody(err.code, err.message), headers: err.headers }
  const e = err as FastifyError & { validationContext?: string }
  if (e.validation) {
    return { http: 400, body: errorBody('IR1000', e.message), headers: {} }
  }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { http: 413, body: errorBody('IR1002', 'request body is larger than 1 MiB'), headers: {} }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        http: 415,
        body: errorBody('IR1003', 'unsupported content type: send application/json'),
        headers: {},
      }
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { http: 400, body: errorBody('IR1001', 'malformed JSON body'), headers: {} }
  }
  if (e.statusCode === 429) {
    return { http: 429, body: errorBody('IR1005', e.message || 'rate limit exceeded'), headers: {} }
  }
  if (e.code === 'FST_ERR_BAD_URL') {
    return {
      http: 400,
      body: errorBody('IR1000', 'the URL is malformed (bad percent-encoding)'),
      headers: {},
    }
  }
  if (e.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return {
      http: 400,
      body: errorBody('IR1000', `a path segment is longer than ${MAX_PARAM_LENGTH} characters`),
      headers: {},
    }
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return { http: 400, body: errorBody('IR1000', e.message || 'invalid request'), headers: {} }
  }
  if (isConnectionLoss(err)) {
    return {
      http: 503,
      body: errorBody('IR5030', 'database unreachable: retry shortly'),
      headers: { 'retry-after': '1' },
    }
  }
  return {
    http: 500,
    body: errorBody('IR5000', 'internal error: quote the x-request-id header when reporting it'),
    headers: {},
  }
}

/** The request id: the client's `x-request-id` when it is safe to echo (SAFE_REQUEST_ID), else a new UUID. */
function requestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : randomUUID()
}

/**
 * What Node's HTTP parser refuses before Fastify sees a request (URL and headers over 16 KiB, malformed
 * HTTP, a request too slow to arrive) answered with a catalog body too.
 */
function clientErrorHandler(err: Error & { code?: string }, socket: import('node:stream').Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [http, reason, body] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          errorBody('IR1007', 'the URL and headers are larger than 16 KiB: shorten the query string'),
        ]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', errorBody('IR1008', 'the request was not received in time')]
        : [400, 'Bad Request', errorBody('IR1000', 'malformed HTTP request')]
  const text = JSON.stringify(body)
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${http} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\nx-request-id: ${randomUUID()}\r\n` +
        `Connection: close\r\n\r\n${text}`,
    )
  }
  socket.destroy()
}

/**
 * Marks every operation that checks a bearer token with `security: [{ bearer: [] }]` in the OpenAPI
 * document (so /docs, once "Authorize" was given a token, sends it with "Try it out") and names its scope in
 * the description. A route is protected when one of its onRequest hooks was made by `requireScope`: the
 * hooks it makes are remembered here, before any route is registered.
 */
function documentBearerSecurity(app: FastifyInstance): void {
  const scopeOf = new WeakMap<object, string>()
  const requireScope = app.requireScope.bind(app)
  app.requireScope = (scope) => {
    const hook = requireScope(scope)
    scopeOf.set(hook, scope)
    return hook
  }
  app.addHook('onRoute', (route) => {
    const hooks = route.onRequest === undefined ? [] : [route.onRequest].flat()
    const scopes = hooks.flatMap((hook) => scopeOf.get(hook) ?? [])
    if (scopes.length === 0) return
    const needs = `Needs a bearer token with the ${scopes.join(' and ')} scope.`
    const description = route.schema?.description ? `${route.schema.description}\n\n${needs}` : needs
    route.schema = { ...route.schema, description, security: [{ bearer: [] }] }
  })
}

/** Routes the rate limit never counts: liveness, readiness, the token signing keys. */
const UNLIMITED_ROUTES = new Set(['/health', '/ready', '/.well-known/jwks.json'])

/**
 * Fastify's `trustProxy` of a TRUST_PROXY setting: a hop count trusts that many proxies nearest the API.
 *
 * @example
 * fastifyTrustProxy(1) // (address, hop) => hop < 1
 */
function fastifyTrustProxy(setting: false | number | string[]) {
  return typeof setting === 'number' ? (_address: string, hop: number) => hop < setting : setting
}

/**
 * Builds the Fastify app (routes, auth, errors, OpenAPI). `server.ts` only listens.
 *
 * Input rules every route shares (issue 9): bodies are JSON only (`/oauth/token` also takes forms) and never
 * coerced; query, path and header values are coerced strictly by their schema (digits to integers,
 * "true"/"false" to booleans); any string with a NUL or a lone surrogate, anywhere in params, query, headers
 * or body, is refused before validation and before any query; every integer a route takes is bounded in its
 * schema (a route without bounds is refused at startup).
 *
 * @example
 * const app = await buildApp(ctx)
 * const res = await app.inject({ method: 'GET', url: '/health' })
 */
export async function buildApp(ctx: ApiContext): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: ctx.logger.child({ component: 'api' }) as unknown as FastifyBaseLogger,
    bodyLimit: ctx.config.bodyLimit,
    // a client sending its request slowly (1 byte every few seconds) holds a socket at most this long; Node checks
    // its timeouts every connectionsCheckingInterval (30 s by default: 1 s here, so the bound is the bound)
    requestTimeout: ctx.config.requestTimeoutMs,
    http: {
      headersTimeout: Math.ceil(ctx.config.requestTimeoutMs / 3),
      connectionsCheckingInterval: 1_000,
    },
    // TRUST_PROXY: request.ip is the address the trusted proxies report (the rate limit's key of anonymous calls)
    trustProxy: fastifyTrustProxy(ctx.config.trustProxy),
    requestIdHeader: false,
    // one access-log line per request, when answered, instead of Fastify's two
    logController: new AccessLog(),
    genReqId: (request) => requestId(request.headers['x-request-id']),
    // a request's logger carries its request id; a silent logger logs nothing, so it is used as it is
    childLoggerFactory: (logger, bindings, options) =>
      logger.level === 'silent' ? logger : logger.child(bindings, options),
    // no coercion by ajv at all: bodies keep their JSON types; query/path/headers are coerced below
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    clientErrorHandler,
    frameworkErrors: (err, request, reply) => {
      const { http, body, headers } = toErrorReply(err)
      ;(reply as FastifyReply)
        .code(http)
        .headers({ ...headers, 'x-request-id': request.id })
        .send(body)
    },
  })
  const repos = createRepos(ctx.db)

  // callback hooks (not async ones) on every request: no promise, no extra microtask
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })

  // GET /metrics and the latency histogram's onResponse hook (api/metrics.ts)
  const metrics =
    ctx.metrics ??
    createServiceMetrics({
      db: ctx.db,
      confirmations: ctx.config.confirmations,
      rpcUrl: ctx.config.rpcUrl,
      redisUrl: ctx.config.redisUrl,
      queuePrefix: ctx.config.queuePrefix,
    })
  if (!ctx.metrics) app.addHook('onClose', () => metrics.close())
  registerMetrics(app, { metrics, token: ctx.config.metricsToken })
  logAbortedRequests(app)

  app.addHook('onRoute', (route) => {
    // A route whose schema takes an unbounded integer is a bug: refuse it when it is registered.
    const schema = route.schema as Record<string, unknown> | undefined
    if (!schema) return
    const unbounded = ['params', 'querystring', 'headers', 'body'].flatMap((part) =>
      unboundedNumbers(schema[part], part),
    )
    if (unbounded.length > 0) {
      throw new Error(
        `${route.method} ${route.url}: numbers without minimum and maximum: ${unbounded.join(', ')}`,
      )
    }
  })

  // Before validation (and before any query): strings the database cannot store are refused, anywhere;
  // then query, path and header values are coerced by the route's schema.
  app.addHook('preValidation', (request, _reply, done) => {
    const problem =
      unsafeInput(request.params, 'params') ??
      unsafeInput(request.query, 'querystring') ??
      unsafeInput(request.headers, 'headers') ??
      unsafeInput(request.body, 'body')
    if (problem) return done(new ApiError('IR1000', problem))
    const schema = request.routeOptions.schema
    if (schema) {
      coerceBySchema(request.query, schema.querystring)
      coerceBySchema(request.params, schema.params)
      coerceBySchema(request.headers, schema.headers)
    }
    done()
  })

  // JSON bodies: an empty body is no body; duplicate keys are refused (api/json-body.ts) (PATCH with a JSON content type and nothing in it). No other
  // content type is parsed outside /oauth/token (text/plain, forms, XML: 415 IR1003).
  app.removeContentTypeParser('application/json')
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body)
    if (text.trim() === '') return done(null, undefined)
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return done(new ApiError('IR1001', 'malformed JSON body'), undefined)
    }
    // JSON.parse keeps the last of duplicate keys: a body that says two things is refused
    const duplicate = duplicateJsonKey(text)
    if (duplicate !== undefined) {
      return done(
        new ApiError('IR1001', `JSON body has the key ${JSON.stringify(duplicate)} twice`),
        undefined,
      )
    }
    done(null, value)
  })

  app.setErrorHandler((err, request, reply) => {
    const { http, body, headers } = toErrorReply(err)
    if (http >= 500) request.log.error({ err }, 'request failed')
    reply.code(http).headers(headers).send(body)
  })
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(errorBody('IR1004', `route ${request.method} ${request.url.split('?')[0]} not found`))
  })

  app.addSchema(ErrorBodySchema)
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'lsreport',
        version: '0.1.0',
        description:
          'Staking platform integration interface for LsETH: onboarding, redemptions, rewards and fees.',
      },
      servers: [{ url: ctx.config.baseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })

  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    max: ctx.config.rateLimitMax,
    timeWindow: ctx.config.rateLimitWindowMs,
    ...(ctx.redis ? { redis: ctx.redis, nameSpace: 'lsreport-rl-' } : {}),
    keyGenerator: (request) => request.auth?.clientId ?? request.ip,
    // liveness, readiness and key discovery answer whatever a neighbour's load: probes and verifiers share
    // an address with everyone behind a load balancer
    allowList: (request) => UNLIMITED_ROUTES.has(request.routeOptions.url ?? ''),
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      message:
        `rate limit exceeded: at most ${context.max} requests per ${ctx.config.rateLimitWindowMs / 1000} s; ` +
        `retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} s`,
    }),
  })

  await app.register(authPlugin, {
    key: ctx.signingKey,
    issuer: ctx.config.authUrl,
    audience: ctx.config.baseUrl,
  })
  documentBearerSecurity(app)

  healthRoutes(app, { db: ctx.db })
  // The token endpoint (and JWKS) in a scope of their own: the only place form-encoded bodies are parsed
  // (RFC 6749 clients send them), and where refused requests answer with the RFC 6749 fields as well.
  await app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: ctx.config.bodyLimit })
    scope.setErrorHandler((err, request, reply) => {
      const { http, body, headers } = toErrorReply(err)
      if (http >= 500) request.log.error({ err }, 'request failed')
      const oauth =
        request.routeOptions.url === '/oauth/token' && http >= 400 && http < 500 && http !== 429
          ? { error: 'invalid_request', error_description: body.message }
          : {}
      reply
        .code(http)
        .headers({ ...headers, 'cache-control': 'no-store' })
        .send({ ...oauth, ...body })
    })
    oauthRoutes(scope, {
      repos,
      key: ctx.signingKey,
      issuer: ctx.config.authUrl,
      audience: ctx.config.baseUrl,
    })
  })
  platformRoutes(app, {
    platform: createPlatformService(ctx.db),
    repos,
    grossFeeBps: () => repos.chain.latestGlobalFeeBps(),
  })
  solRoutes(app, { repos })
  redeemRoutes(app, { repos })
  app.decorate('reportAnswers', createAnswerMemo())
  app.decorateReply('answerEtag', undefined)
  rewardRoutes(app, { repos })
  feeRoutes(app, { repos })
  reportVersionRoutes(app, { repos })
  discountRoutes(app, { repos })
  // the exit queue's consensus figures are the consensus job's latest snapshot (jobs/consensus.ts)
  projectionRoutes(app, { repos })
  adminRoutes(app, { repos })
  webhookRoutes(app, { repos, allowPrivate: ctx.config.webhooks.allowPrivate })

  return app
}
