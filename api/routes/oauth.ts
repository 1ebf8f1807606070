import type { FastifyInstance, FastifyReply } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../../db/repos/index.ts'
import { parseScopes } from '../auth/scopes.ts'
import { createClientAuthenticator } from '../auth/secrets.ts'
import type { SigningKeys } from '../auth/signing-keys.ts'
import { issueToken } from '../auth/tokens.ts'
import type { ErrorCode } from '../errors.ts'

type OAuthError = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'invalid_scope'

const CODES: Record<OAuthError, ErrorCode> = {
  invalid_request: 'IR2004',
  invalid_client: 'IR2005',
  unsupported_grant_type: 'IR2006',
  invalid_scope: 'IR2007',
}

/** RFC 6749 §5.2 error body, plus the service's `message`/`status`. */
function oauthError(reply: FastifyReply, error: OAuthError, description: string) {
  const http = error === 'invalid_client' ? 401 : 400
  if (http === 401) reply.header('www-authenticate', 'Basic realm="lsreport"')
  return reply
    .code(http)
    .header('cache-control', 'no-store')
    .send({ error, error_description: description, message: description, status: CODES[error] })
}

function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = header ? /^Basic\s+(\S+)$/i.exec(header) : null
  if (!match) return undefined
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  // RFC 6749 §2.3.1: client id and secret are form-urlencoded before Basic encoding
  const formDecode = (s: string) => decodeURIComponent(s.replaceAll('+', ' '))
  try {
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) }
  } catch {
    return undefined
  }
}

/** RFC 6749 Appendix A: client ids, secrets and the other token parameters are printable ASCII (VSCHAR). */
const VSCHAR = /^[\x20-\x7e]*$/
const MAX_FIELD_LENGTH = 1024
const FIELDS = ['grant_type', 'audience', 'client_id', 'client_secret', 'scope'] as const

const TokenBody = Type.Object(
  {
    grant_type: Type.Optional(Type.String({ maxLength: MAX_FIELD_LENGTH })),
    audience: Type.Optional(Type.String({ maxLength: MAX_FIELD_LENGTH })),
    client_id: Type.Optional(Type.String({ maxLength: MAX_FIELD_LENGTH })),
    client_secret: Type.Optional(Type.String({ maxLength: MAX_FIELD_LENGTH })),
    scope: Type.Optional(Type.String({ maxLength: MAX_FIELD_LENGTH })),
  },
  { additionalProperties: true },
)

/** The first field of a token request that is not a printable-ASCII string of bounded length. */
function malformedField(fields: Record<string, unknown>): string | undefined {
  for (const name of FIELDS) {
    const value = fields[name]
    if (value === undefined) continue
    if (typeof value !== 'string') return `${name} must be a string`
    if (value.length > MAX_FIELD_LENGTH) return `${name} is longer than ${MAX_FIELD_LENGTH} characters`
    if (!VSCHAR.test(value)) return `${name} must be printable ASCII (RFC 6749 Appendix A)`
  }
  return undefined
}

const TokenResponse = Type.Object({
  access_token: Type.String(),
  scope: Type.String(),
  expires_in: Type.Number(),
  token_type: Type.Literal('Bearer'),
})

/**
 * POST /oauth/token: the client-credentials grant (JSON, form-encoded, HTTP Basic client auth), signed with the
 * current signing key, and the JWKS (every live key). Also gives the bearer-token check its source of client
 * statuses (revocation).
 *
 * Client authentication takes the same work whether the client id exists or not, and whatever number of secrets
 * it has (one query, then scrypt against MAX_SECRETS_PER_CLIENT hashes: its active secrets padded with a dummy
 * hash; `createClientAuthenticator`), so response times do not reveal client ids; wrong
 * credentials count against the caller address's budget of refused requests (429 IR1005 over it).
 */
export function oauthRoutes(
  app: FastifyInstance,
  deps: {
    repos: Repos
    keys: SigningKeys
    issuer: string
    audience: string
    /** MAX_SECRETS_PER_CLIENT: how many hashes every secret check runs scrypt against. */
    maxSecretsPerClient: number
  },
) {
  app.useClientStatus((clientId) => deps.repos.clients.status(clientId))
  // scrypt against MAX_SECRETS_PER_CLIENT hashes for every id (a dummy for each missing one), in parallel
  const authenticate = createClientAuthenticator({
    credentials: (clientId) => deps.repos.clients.credentials(clientId),
    candidates: deps.maxSecretsPerClient,
  })

  app.post(
    '/oauth/token',
    {
      schema: {
        tags: ['auth'],
        summary: 'Issue an access token (OAuth 2.0 client credentials)',
        body: TokenBody,
        response: { 200: TokenResponse },
      },
    },
    async (request, reply) => {
      const raw = request.body ?? {}
      if (typeof raw !== 'object' || Array.isArray(raw)) {
        return oauthError(reply, 'invalid_request', 'the body must be a JSON object or a form')
      }
      const basic = basicCredentials(request.headers.authorization)
      const problem = malformedField({
        ...(raw as Record<string, unknown>),
        ...(basic ? { client_id: basic.id, client_secret: basic.secret } : {}),
      })
      if (problem) return oauthError(reply, 'invalid_request', problem)
      const body = raw as Record<string, string | undefined>
      // RFC 6749 §2.3: one authentication method per request (a body client_id naming the same client is fine)
      if (
        basic &&
        (body.client_secret !== undefined || (body.client_id !== undefined && body.client_id !== basic.id))
      ) {
        return oauthError(
          reply,
          'invalid_request',
          'the client authenticated twice: use HTTP Basic or client_id/client_secret in the body, not both',
        )
      }
      const clientId = basic?.id ?? body.client_id
      const clientSecret = basic?.secret ?? body.client_secret
      if (body.grant_type === undefined) return oauthError(reply, 'invalid_request', 'grant_type is required')
      if (body.grant_type !== 'client_credentials') {
        return oauthError(reply, 'unsupported_grant_type', 'grant_type must be client_credentials')
      }
      if (!clientId || !clientSecret) {
        return oauthError(
          reply,
          'invalid_request',
          'client_id and client_secret are required (body or HTTP Basic)',
        )
      }
      const audience = body.audience ?? deps.audience
      if (audience.replace(/\/+$/, '') !== deps.audience) {
        return oauthError(reply, 'invalid_request', `audience must be ${deps.audience}`)
      }
      const wait = await app.authFailures.blocked(request)
      if (wait !== undefined) throw app.authFailures.tooMany(wait)
      const client = await authenticate(clientId, clientSecret)
      if (!client) {
        const retryAfter = await app.authFailures.record(request)
        if (retryAfter !== undefined) throw app.authFailures.tooMany(retryAfter)
        return oauthError(reply, 'invalid_client', 'client authentication failed')
      }
      const granted = parseScopes(client.scopes).scopes as string[]
      let scopes = granted
      if (body.scope !== undefined && body.scope.trim() !== '') {
        const asked = body.scope.split(/\s+/).filter(Boolean)
        const extra = asked.filter((s) => !granted.includes(s))
        if (extra.length > 0)
          return oauthError(reply, 'invalid_scope', `client lacks scope(s): ${extra.join(' ')}`)
        scopes = asked
      }
      const accessToken = await issueToken(await deps.keys.current(), {
        issuer: deps.issuer,
        audience: deps.audience,
        clientId: client.id,
        orgId: client.org_id,
        scopes,
        ttlSeconds: deps.keys.tokenTtlSeconds,
      })
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
      return {
        access_token: accessToken,
        scope: scopes.join(' '),
        expires_in: deps.keys.tokenTtlSeconds,
        token_type: 'Bearer' as const,
      }
    },
  )

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['auth'],
        summary: 'Public keys that sign access tokens',
        description:
          'Every live signing key, each with its kid: the current one and, after a rotation, the previous ones ' +
          'until the tokens they signed have expired.',
      },
    },
    async () => ({ keys: await deps.keys.jwks() }),
  )
}
