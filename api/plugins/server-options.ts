import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type { FastifyBaseLogger, FastifyHttpOptions } from 'fastify'
import type { Config } from '../../common/config.ts'
import type { Logger } from '../../common/logger.ts'
import { MAX_PARAM_LENGTH } from '../error-reply.ts'
import { AccessLog } from '../request-log.ts'
import { RequestLogger } from '../request-logger.ts'
import { SAFE_REQUEST_ID } from '../schemas.ts'
import { clientErrorHandler, frameworkErrors } from './error-handlers.ts'

/** The request id: the client's `x-request-id` when it is safe to echo (SAFE_REQUEST_ID), else a new UUID. */
function requestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : randomUUID()
}

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
 * The options the Fastify instance is made with: logging (one access line per request), request ids,
 * timeouts and limits of the HTTP server, the proxies trusted, no coercion by ajv, and the catalog bodies
 * of the errors Fastify and Node answer before any route.
 *
 * @example
 * const app = Fastify(serverOptions({ config, logger }))
 */
export function serverOptions({
  config,
  logger,
}: {
  config: Config
  logger: Logger
}): FastifyHttpOptions<Server, FastifyBaseLogger> {
  return {
    loggerInstance: logger.child({ component: 'api' }) as unknown as FastifyBaseLogger,
    bodyLimit: config.bodyLimit,
    // a client sending its request slowly (1 byte every few seconds) holds a socket at most this long; Node checks
    // its timeouts every connectionsCheckingInterval (30 s by default: 1 s here, so the bound is the bound)
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: Math.ceil(config.requestTimeoutMs / 3),
      connectionsCheckingInterval: 1_000,
    },
    // TRUST_PROXY: request.ip is the address the trusted proxies report (the rate limit's key of anonymous calls)
    trustProxy: fastifyTrustProxy(config.trustProxy),
    requestIdHeader: false,
    // one access-log line per request, when answered, instead of Fastify's two
    logController: new AccessLog(),
    genReqId: (request) => requestId(request.headers['x-request-id']),
    // a request's logger carries its request id, in a pino child made when the request first logs through it
    // (most requests only have their access line, which holds the request id itself: api/request-logger.ts);
    // a silent logger logs nothing, so it is used as it is
    childLoggerFactory: (logger, bindings, options) =>
      logger.level === 'silent' ? logger : new RequestLogger(logger, bindings, options),
    // no coercion by ajv at all: bodies keep their JSON types; query/path/headers are coerced by the
    // input rules (plugins/input-rules.ts)
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    clientErrorHandler,
    frameworkErrors,
  }
}
