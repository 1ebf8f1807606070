import Fastify, { type FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type { Config } from '../common/config.ts'
import type { Logger } from '../common/logger.ts'
import type { Db } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { createServiceMetrics, type ServiceMetrics } from '../metrics/index.ts'
import { registerImpersonation } from './auth/impersonation.ts'
import { authPlugin } from './auth/plugin.ts'
import type { SigningKeys } from './auth/signing-keys.ts'
import { registerMetrics } from './metrics.ts'
import { documentBearerSecurity, registerDocs } from './plugins/docs.ts'
import { registerErrorHandlers } from './plugins/error-handlers.ts'
import { registerInputRules } from './plugins/input-rules.ts'
import { registerRateLimit } from './plugins/rate-limit.ts'
import { registerSecurityHeaders } from './plugins/security-headers.ts'
import { serverOptions } from './plugins/server-options.ts'
import { logAbortedRequests } from './request-log.ts'
import { registerRoutes } from './routes/index.ts'

/** What the API needs: built once by the entrypoint. */
export interface ApiContext {
  config: Config
  logger: Logger
  db: Db
  /** The token signing keys, shared with every API process through the store (api/auth/signing-keys.ts). */
  signingKeys: SigningKeys
  /** Redis for the shared rate-limit store; absent: in-memory store. */
  redis?: Redis | undefined
  /** This process's metrics (the embedded start shares them with its jobs); absent: built from the config. */
  metrics?: ServiceMetrics | undefined
}

/** GET /metrics and the latency histogram's onResponse hook (api/metrics.ts), over the context's metrics. */
function registerServiceMetrics(app: FastifyInstance, ctx: ApiContext): void {
  const metrics =
    ctx.metrics ??
    createServiceMetrics({
      db: ctx.db,
      confirmations: ctx.config.confirmations,
      rpcUrl: ctx.config.rpcUrl,
      redisUrl: ctx.config.redisUrl,
      queuePrefix: ctx.config.queuePrefix,
      tenantLabels: ctx.config.metricsTenantLabels,
    })
  if (!ctx.metrics) app.addHook('onClose', () => metrics.close())
  registerMetrics(app, { metrics, token: ctx.config.metricsToken })
}

/**
 * Builds the Fastify app (routes, auth, errors, OpenAPI). `server.ts` only listens. The order matters:
 * what is registered before the rate limit (/metrics, /docs) is not counted by it, and the bearer security
 * of the OpenAPI document must see the auth plugin before any route.
 *
 * Input rules every route shares (issue 9, plugins/input-rules.ts): bodies are JSON only (`/oauth/token`
 * also takes forms) and never coerced; query, path and header values are coerced strictly by their schema
 * (digits to integers, "true"/"false" to booleans); any string with a NUL or a lone surrogate, anywhere in
 * params, query, headers or body, is refused before validation and before any query; every integer a route
 * takes is bounded in its schema (a route without bounds is refused at startup).
 *
 * @example
 * const app = await buildApp(ctx)
 * const res = await app.inject({ method: 'GET', url: '/health' })
 */
export async function buildApp(ctx: ApiContext): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify(serverOptions(ctx))
  await registerSecurityHeaders(app, { baseUrl: ctx.config.baseUrl })

  // callback hooks (not async ones) on every request: no promise, no extra microtask
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
  registerServiceMetrics(app, ctx)
  logAbortedRequests(app)
  registerInputRules(app)
  registerErrorHandlers(app)

  await registerDocs(app, { baseUrl: ctx.config.baseUrl })
  await registerRateLimit(app, ctx)
  await app.register(authPlugin, {
    keys: ctx.signingKeys,
    issuer: ctx.config.authUrl,
    audience: ctx.config.baseUrl,
  })
  documentBearerSecurity(app)
  const repos = createRepos(ctx.db)
  // Impersonate-Org honoured where a route declares it, refused (400) everywhere else
  registerImpersonation(app, { repos })

  await registerRoutes(app, {
    config: ctx.config,
    db: ctx.db,
    repos,
    signingKeys: ctx.signingKeys,
  })
  return app
}
