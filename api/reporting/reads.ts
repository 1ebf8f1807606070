import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../../db/repos/index.ts'
import { caller } from '../auth/plugin.ts'
import { ApiError } from '../errors.ts'
import { type ReportReads, reportReads, reportReadsAsOf } from '../report-cache.ts'
import { parseInstant } from './dates.ts'

/** Whose and which reads a reporting request makes: its reading organization and its `as_of` reads. */

/** The `as_of` query parameter of every reporting read (README "For finance", restatements). */
export const AsOfQuery = {
  as_of: Type.Optional(
    Type.String({
      description:
        'RFC 3339 instant with a zone, not in the future: answer with the versions of the days visible then ' +
        '(the restatement log), byte for byte what was answered at that instant',
    }),
  ),
}

/** Per request with an `as_of`: its reads as of that instant. */
const readsOfRequest = new WeakMap<FastifyRequest, ReportReads>()

/**
 * The reporting reads of a request: the app's shared ones, or, with `?as_of=<RFC 3339 instant>`, the days as
 * they were visible then (`reportReadsAsOf`). A malformed or future `as_of`: 400 IR1000.
 */
export function readsFor(request: FastifyRequest, repos: Repos): ReportReads {
  const query = request.query as Record<string, unknown> | undefined
  const value = query?.as_of
  // the app's reads: nothing kept per request
  if (value === undefined) return reportReads(repos)
  const held = readsOfRequest.get(request)
  if (held) return held
  const asOf = parseInstant(value, 'as_of')
  if (asOf.getTime() > Date.now()) {
    throw new ApiError('IR1000', `as_of (${value}) is in the future: give an instant up to now`)
  }
  const reads = reportReadsAsOf(repos, asOf)
  readsOfRequest.set(request, reads)
  return reads
}

/**
 * The organization a reporting read is made for: the token's, or the one named by `Impersonate-Org` on a
 * route that declares it, once allowed and audited before the handler (api/auth/impersonation.ts
 * `registerImpersonation`: 403 IR2003 without the `impersonate:org` scope, 403 IR2008 toward an organization
 * that has not named the token's a delegate, an unknown one alike): at hand, no promise.
 */
export function readingOrg(request: FastifyRequest): string {
  return caller(request).orgId
}
