import type { FastifyRequest } from 'fastify'
import { EngineError } from '../../engine/index.ts'
import { ApiError, apiErrorOf } from '../errors.ts'

/** The limits and refusals of a reporting request's inputs (400 IR1000 / IR1006 / IR4001). */

/** At most this many lots, accounts or addresses per reporting POST (docs/decisions.md "Limits"). */
export const MAX_REPORT_ITEMS = 1000

/** The v1 reward endpoints take no `unit` (query or body): 400 IR1000. */
export function rejectUnit(request: FastifyRequest): void {
  const query = request.query as Record<string, unknown> | undefined
  const body = request.body as Record<string, unknown> | undefined
  const inBody = body !== null && typeof body === 'object' && !Array.isArray(body) && 'unit' in body
  if ((query && 'unit' in query) || inBody) {
    throw new ApiError(
      'IR1000',
      'unit is not accepted by the v1 reward endpoints: amounts are in the unit their field name ends with',
    )
  }
}

/**
 * Maps an engine error raised by on-the-fly math (lots) to the catalog: input errors through the one mapping
 * (`apiErrorOf`), any other engine error of the caller's lots as 400 IR1000 too; anything else is rethrown.
 */
export function engineErrorToApi(err: unknown): never {
  const mapped = apiErrorOf(err)
  if (mapped) throw mapped
  if (err instanceof EngineError) throw new ApiError('IR1000', err.message, { cause: err })
  throw err
}
