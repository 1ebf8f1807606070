import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../../db/repos/index.ts'
import { mayImpersonate } from '../../platform/delegations.ts'
import { ApiError } from '../errors.ts'
import { unsafeInput } from '../schemas.ts'
import { caller } from './plugin.ts'
import type { TokenClaims } from './tokens.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route honours `Impersonate-Org` (set by `registerImpersonation` for a route that declares it). */
    impersonation?: boolean
  }
}

/**
 * The one answer to a refused impersonation: the same status, code and message for an organization that does
 * not exist and for one that has not named the caller's organization a delegate (no org id is echoed), so
 * org ids cannot be enumerated.
 */
export const IMPERSONATION_REFUSED =
  'Impersonate-Org refused: that organization has not named your organization a delegate'

/**
 * The route-level declaration that a route honours `Impersonate-Org`: its schema's `headers`
 * (docs/interface.md "Impersonate-Org"). A route whose schema does not declare it refuses the header (400
 * IR2009), so a route added later cannot ignore it; the OpenAPI document lists the header on exactly the routes
 * that honour it.
 *
 * @example
 * app.get('/v0/platform/accounts', { schema: { headers: ImpersonateHeaders, ... } }, handler)
 */
export const ImpersonateHeaders = Type.Object({
  'impersonate-org': Type.Optional(
    Type.String({
      description:
        'act as this organization (reads and writes): needs the impersonate:org scope and that organization ' +
        'naming yours a delegate (or an operator organization); audited with both organization ids',
    }),
  ),
})

/** The claims a request acts with once `Impersonate-Org` was honoured: the token's, as the named organization. */
export interface ImpersonatedClaims extends TokenClaims {
  /** The token's own organization (the one that acts); `orgId` is the organization acted as. */
  tokenOrgId: string
}

/**
 * The organization named by `Impersonate-Org`, once allowed (docs/decisions.md "Impersonation"): the token needs
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
  // before any query (the input guard of every other value runs later, at preValidation)
  const unsafe = unsafeInput(orgId, 'headers/impersonate-org')
  if (unsafe) throw new ApiError('IR1000', unsafe)
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

/** Whether a route's schema declares `Impersonate-Org` (see `ImpersonateHeaders`). */
export function declaresImpersonation(schema: RouteOptions['schema']): boolean {
  const headers = (schema as { headers?: { properties?: Record<string, unknown> } } | undefined)?.headers
  return headers?.properties?.['impersonate-org'] !== undefined
}

/** The 400 IR2009 of a request sending `Impersonate-Org` to a route that does not honour it. */
function notHonoured(request: FastifyRequest): ApiError {
  const route = `${request.method} ${request.routeOptions.url ?? request.url}`
  return new ApiError(
    'IR2009',
    `Impersonate-Org does not apply to ${route}: its answer is the same for every organization ` +
      '(only the routes that document the header honour it); send the request without it',
  )
}

/**
 * `Impersonate-Org`, honoured or refused, never ignored (docs/interface.md "Impersonate-Org"), in one place:
 * - a route whose schema declares it (`ImpersonateHeaders`) must check a bearer token (else the app does not
 *   start); after the token and scope checks, its request acts as the named organization: `caller(request)`
 *   then names that organization (`orgId`; the token's own in `tokenOrgId`), for reads and writes alike, after
 *   `impersonatedOrg` allowed it (403 IR2003 / IR2008) and audited it;
 * - every other route (public, token, admin, and those whose answer is the same for every organization)
 *   refuses the header with 400 IR2009 before anything else, whoever sends it.
 * A request without the header costs one property read. Register after `documentBearerSecurity` (which marks
 * the routes that check a token) and before any route.
 *
 * @example
 * registerImpersonation(app, { repos })
 */
export function registerImpersonation(app: FastifyInstance, { repos }: { repos: Repos }): void {
  const actAs: onRequestHookHandler = (request, _reply, done) => {
    const header = request.headers['impersonate-org']
    if (header === undefined) return done()
    const auth = caller(request)
    impersonatedOrg(request, auth, header, repos).then((orgId) => {
      if (orgId !== auth.orgId) {
        const claims: ImpersonatedClaims = { ...auth, orgId, tokenOrgId: auth.orgId }
        request.auth = claims
      }
      done()
    }, done)
  }
  app.addHook('onRoute', (route) => {
    if (!declaresImpersonation(route.schema)) return
    const security = (route.schema as { security?: unknown[] }).security
    if (!security?.length) {
      throw new Error(`${route.method} ${route.url}: declares Impersonate-Org but checks no bearer token`)
    }
    const hooks = route.onRequest === undefined ? [] : [route.onRequest].flat()
    // after the token and scope checks (the route's own onRequest hooks), once
    if (!hooks.includes(actAs)) route.onRequest = [...hooks, actAs]
    route.config = { ...route.config, impersonation: true }
  })
  // a hook of every request (the app's own onRequest hooks run before any route's): 404s answer 404
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.headers['impersonate-org'] === undefined || request.is404) return done()
    if (request.routeOptions.config.impersonation === true) return done()
    done(notHonoured(request))
  })
}
