import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'

/**
 * The API's access log, as Fastify's log controller: one line per request, when it is answered, at `info`
 * (`error` with the error when the response failed on its way out): `{request_id, method, url, route,
 * status_code, response_ms}`, message "request answered". Fastify's default writes two lines per request
 * ("incoming request" and "request completed", each a synchronous write with the request and reply
 * serialized): about twice the CPU of this one line (README, "Development"). Every other line of a request
 * (the error handler's "request failed") carries the same `request_id`.
 *
 * @example
 * const app = Fastify({ loggerInstance, logController: new AccessLog() })
 */
export class AccessLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' })
  }

  /** Nothing when a request arrives: its one line is written when it is answered. */
  override incomingRequest(): void {}

  /** The request's one line. */
  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = {
      method: request.method,
      url: request.url,
      route: request.routeOptions.url ?? 'unmatched',
      status_code: reply.statusCode,
      response_ms: Math.round(reply.elapsedTime * 100) / 100,
    }
    if (error) request.log.error({ ...line, err: error }, 'request answered')
    else request.log.info(line, 'request answered')
  }
}
