import {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify'
import { redactUrl } from '../common/redact-url.ts'
import { RequestLogger } from './request-logger.ts'

/** The longest URL written whole to the access log; a longer one is cut there (`url_truncated: true`). */
export const ACCESS_LOG_MAX_URL = 2048

/**
 * A request's fields in the access log: `request_id` first when the line's logger does not bind it
 * (`lineLogger`: where a request's pino child would have bound it, so the line is the same); `client_id` and
 * `org_id` once its token was verified; `status_code` and `response_ms` when it was answered (`reply`). One
 * object literal, built once per line (fields left undefined are not written).
 */
function requestFields(request: FastifyRequest, requestId: string | undefined, reply?: FastifyReply) {
  // the values of secret query parameters (access_token, client_secret, ...) never reach the log; redacted
  // before the cut, so a cut cannot leave part of a secret behind its name
  const url = redactUrl(request.url)
  const cut = url.length > ACCESS_LOG_MAX_URL
  const auth = request.auth
  return {
    request_id: requestId,
    method: request.method,
    url: cut ? url.slice(0, ACCESS_LOG_MAX_URL) : url,
    url_truncated: cut ? true : undefined,
    route: request.routeOptions.url ?? 'unmatched',
    client_id: auth?.clientId,
    org_id: auth?.orgId,
    status_code: reply?.statusCode,
    response_ms: reply ? Math.round(reply.elapsedTime * 100) / 100 : undefined,
  }
}

/**
 * The logger a request's access line is written on: the request logger's parent when the request logger is a
 * `RequestLogger` (no pino child made for the line, which then holds `request_id` itself), else the request's
 * logger as it is (its own bindings, if any, hold the id).
 */
function lineLogger(log: FastifyBaseLogger): FastifyBaseLogger {
  return log instanceof RequestLogger ? log.unbound() : log
}

/** The request id the access line must hold itself: when its logger (`lineLogger`) does not bind it. */
function ownId(request: FastifyRequest): string | undefined {
  return request.log instanceof RequestLogger ? request.id : undefined
}

/** The fields of the line of a request that was answered (or whose answer failed). */
function lineOf(request: FastifyRequest, reply: FastifyReply) {
  return requestFields(request, ownId(request), reply)
}

/**
 * The API's access log, as Fastify's log controller: one line per request, when it ends, with
 * `{request_id, method, url, route, status_code, response_ms}` and, for a request with a verified token,
 * `client_id` and `org_id` (the values of secret query parameters replaced by `[redacted]`: common/redact-url.ts;
 * a URL longer than ACCESS_LOG_MAX_URL is cut there, with `url_truncated: true`: a client cannot make every line
 * 16 KiB):
 * - "request answered" (`info`) when the response was sent (`error` with the error when sending it failed);
 * - "response failed" (`error`, with the error) when the answer's body broke after its headers were sent;
 * - "request aborted" (`info`) when the client went away first (`logAbortedRequests`).
 *
 * Fastify's default writes two lines per request ("incoming request" and "request completed", each a
 * synchronous write with the request and reply serialized): about twice the CPU of this one line (measured with
 * bench:api when this was written; the git log keeps the run). Its lines hold `request_id` among their own
 * fields and are written on the request logger's parent (`lineLogger`): no pino child is made per request.
 * Every other line of a request (the error handler's "request failed") carries the same `request_id`,
 * bound by the request's logger (`RequestLogger`, made when the request first logs through it).
 *
 * @example
 * const app = Fastify({ loggerInstance, logController: new AccessLog() })
 * logAbortedRequests(app)
 */
export class AccessLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' })
  }

  /** Nothing when a request arrives: its one line is written when it ends. */
  override incomingRequest(): void {}

  /** The line of a request whose response was sent (or failed to be). */
  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const log = lineLogger(request.log)
    if (error) log.error({ ...lineOf(request, reply), err: error }, 'request answered')
    // the line is built only when it is written (a logger above info would drop it)
    else if (WRITES_INFO.has(log.level)) log.info(lineOf(request, reply), 'request answered')
  }

  /**
   * The line of a request whose answer's body broke after its headers (no "request answered" follows); a
   * client that went away mid-body has its "request aborted" line from `logAbortedRequests` instead.
   */
  override streamError(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE') return
    lineLogger(request.log).error({ ...lineOf(request, reply), err: error }, 'response failed')
  }
}

/** The logger levels at which `info` lines are written. */
const WRITES_INFO = new Set(['info', 'debug', 'trace'])

/**
 * The "request aborted" line (`{request_id, method, url, route}`, with `client_id` and `org_id` when known)
 * of a request whose client closed the connection before its answer was complete: no other line of the
 * access log is written for it. Added only when the logger writes `info`; goes with `AccessLog`.
 */
export function logAbortedRequests(app: FastifyInstance): void {
  if (!WRITES_INFO.has(app.log.level)) return
  app.addHook('onRequestAbort', (request, done) => {
    lineLogger(request.log).info(requestFields(request, ownId(request)), 'request aborted')
    done()
  })
}
