import type { FastifyRequest } from 'fastify'
import type { Repos } from '../../db/repos/index.ts'
import { mayImpersonate } from '../../platform/delegations.ts'
import { ApiError } from '../errors.ts'
import type { TokenClaims } from './tokens.ts'

/**
 * The one answer to a refused impersonation: the same status, code and message for an organization that does
 * not exist and for one that has not named the caller's organization a delegate (no org id is echoed), so
 * org ids cannot be enumerated.
 */
export const IMPERSONATION_REFUSED =
  'Impersonate-Org refused: that organization has not named your organization a delegate'

/**
 * The organization named by `Impersonate-Org`, once allowed (docs/decisions.md "Authentication and scopes"): the token needs
 * `impersonate:org` (else 403 IR2003) and the named organization must have named the token's organization a
 * delegate, or the token's organization must be an operator organization (else 403 IR2008, the same for an
 * unknown organization). Each impersonated request leaves one audit row (both org ids, the client, the route,
 * the request id). Naming the token's own organization is no impersonation: allowed, not audited.
 *
 * @example
 * const orgId = await impersonatedOrg(request, caller(request), 'org_a', repos)
 */
export async function impersonatedOrg(
  request: FastifyRequest,
  auth: TokenClaims,
  header: string | string[],
  repos: Repos,
): Promise<string> {
  if (!auth.scopes.includes('impersonate:org')) {
    throw new ApiError('IR2003', 'Impersonate-Org needs the impersonate:org scope')
  }
  const orgId = (Array.isArray(header) ? header[0] : header)?.trim() ?? ''
  if (orgId === auth.orgId) return orgId
  if (orgId === '' || !(await mayImpersonate(repos, auth.orgId, orgId))) {
    throw new ApiError('IR2008', IMPERSONATION_REFUSED)
  }
  await repos.delegations.recordImpersonation({
    orgId: auth.orgId,
    clientId: auth.clientId,
    targetOrgId: orgId,
    method: request.method,
    route: request.routeOptions.url ?? request.url,
    requestId: String(request.id),
  })
  return orgId
}
