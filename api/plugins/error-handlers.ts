import { randomUUID } from 'node:crypto'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { EngineError } from '../../engine/index.ts'
import { errorBody, toErrorReply } from '../error-reply.ts'

/**
 * What Node's HTTP parser refuses before Fastify sees a request (URL and headers over 16 KiB, malformed
 * HTTP, a request too slow to arrive) answered with a catalog body too.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Duplex): void {
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

/** Fastify's `frameworkErrors`: a bad URL or an over-long path segment answers with its catalog body. */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const { http, body, headers } = toErrorReply(err)
  reply
    .code(http)
    .headers({ ...headers, 'x-request-id': request.id })
    .send(body)
}

/**
 * The app's error handler (any thrown error to its catalog reply, 5xx logged) and its not-found handler
 * (IR1004 naming the method and path, never the query string). An engine input error no route turned into
 * its own refusal is answered 400 by the one mapping (`apiErrorOf`) and logged as a warning: the route let
 * an input through that a calculator refused.
 *
 * @example
 * registerErrorHandlers(app) // GET /nope -> 404 { message: 'route GET /nope not found', status: 'IR1004' }
 */
export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const { http, body, headers } = toErrorReply(err)
    if (http >= 500) request.log.error({ err }, 'request failed')
    else if (err instanceof EngineError) request.log.warn({ err }, 'engine input error answered 400')
    reply.code(http).headers(headers).send(body)
  })
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(errorBody('IR1004', `route ${request.method} ${request.url.split('?')[0]} not found`))
  })
}
