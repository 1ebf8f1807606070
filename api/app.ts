import { randomUUID } from 'node:crypto'
import path from 'node:path'
import formbody from '@fastify/formbody'
import rateLimit from '@fastify/rate-limit'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import { type ConsensusSource, createConsensusSource, DEVNET_CONSENSUS_FILE } from '../chain/beacon.ts'
import type { Config } from '../common/config.ts'
import type { Logger } from '../common/logger.ts'
import type { Db } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { createPlatformService } from '../platform/service.ts'
import type { SigningKey } from './auth/keys.ts'
import { authPlugin } from './auth/plugin.ts'
import { ApiError, type ErrorBody, type ErrorCode } from './errors.ts'
import { adminRoutes } from './routes/admin.ts'
import { discountRoutes } from './routes/discounts.ts'
import { feeRoutes } from './routes/fees.ts'
import { healthRoutes } from './routes/health.ts'
import { oauthRoutes } from './routes/oauth.ts'
import { platformRoutes } from './routes/platform.ts'
import { projectionRoutes } from './routes/projections.ts'
import { redeemRoutes } from './routes/redeems.ts'
import { rewardRoutes } from './routes/rewards.ts'
import { solRoutes } from './routes/sol.ts'
import { ErrorBodySchema } from './schemas.ts'

/** What the API needs: built once by the entrypoint. */
export interface ApiContext {
  config: Config
  logger: Logger
  db: Db
  signingKey: SigningKey
  /** Redis for the shared rate-limit store; absent: in-memory store. */
  redis?: Redis | undefined
  /** Consensus-layer figures for the exit queue; absent: BEACON_URL, else `$DATA_DIR/devnet-consensus.json`. */
  consensus?: ConsensusSource | undefined
}

function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { message, status: code }
}

/** Maps any thrown error to the catalog: `{http, body, headers}`. Internal errors never leak. */
export function toErrorReply(err: unknown): {
  http: number
  body: ErrorBody
  headers: Record<string, string>
} {
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
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return { http: 400, body: errorBody('IR1000', e.message || 'invalid request'), headers: {} }
  }
  return {
    http: 500,
    body: errorBody('IR5000', 'internal error: quote the x-request-id header when reporting it'),
    headers: {},
  }
}

/**
 * Builds the Fastify app (routes, auth, errors, OpenAPI). `server.ts` only listens.
 *
 * @example
 * const app = await buildApp(ctx)
 * const res = await app.inject({ method: 'GET', url: '/health' })
 */
export async function buildApp(ctx: ApiContext): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: ctx.logger.child({ component: 'api' }) as unknown as FastifyBaseLogger,
    bodyLimit: ctx.config.bodyLimit,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false } },
  })
  const repos = createRepos(ctx.db)

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })

  // JSON bodies: an empty body is no body (PATCH with a JSON content type and nothing in it).
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body)
    if (text.trim() === '') return done(null, undefined)
    try {
      done(null, JSON.parse(text))
    } catch {
      done(new ApiError('IR1001', 'malformed JSON body'), undefined)
    }
  })
  await app.register(formbody, { bodyLimit: ctx.config.bodyLimit })

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
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      message: `rate limit exceeded: ${context.max} requests per ${context.after}`,
    }),
  })

  await app.register(authPlugin, {
    key: ctx.signingKey,
    issuer: ctx.config.authUrl,
    audience: ctx.config.baseUrl,
  })

  healthRoutes(app, { db: ctx.db })
  oauthRoutes(app, { repos, key: ctx.signingKey, issuer: ctx.config.authUrl, audience: ctx.config.baseUrl })
  platformRoutes(app, {
    platform: createPlatformService(ctx.db),
    repos,
    grossFeeBps: () => repos.chain.latestGlobalFeeBps(),
  })
  solRoutes(app, { repos })
  redeemRoutes(app, { repos })
  rewardRoutes(app, { repos })
  feeRoutes(app, { repos })
  discountRoutes(app, { repos })
  projectionRoutes(app, {
    repos,
    consensus:
      ctx.consensus ??
      createConsensusSource({
        beaconUrl: ctx.config.beaconUrl,
        devnetFile: path.join(ctx.config.dataDir, DEVNET_CONSENSUS_FILE),
      }),
  })
  adminRoutes(app, { repos })

  return app
}
