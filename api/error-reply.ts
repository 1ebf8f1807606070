import type { FastifyError } from 'fastify'
import { isConnectionLoss } from '../db/index.ts'
import { ApiError, apiErrorOf, type ErrorBody, type ErrorCode } from './errors.ts'

/** The longest path segment (an account key of 256 characters, percent-encoded, fits). */
export const MAX_PARAM_LENGTH = 2400

/**
 * The catalog body of one error.
 *
 * @example
 * errorBody('IR1004', 'route GET /x not found') // { message: 'route GET /x not found', status: 'IR1004' }
 */
export function errorBody(code: ErrorCode, message: string): ErrorBody {
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
