import type { FastifyInstance, FastifyReply } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../../db/repos/index.ts'
import type { SigningKey } from '../auth/keys.ts'
import { parseScopes } from '../auth/scopes.ts'
import { verifySecret } from '../auth/secrets.ts'
import { issueToken, TOKEN_TTL_SECONDS } from '../auth/tokens.ts'
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

const TokenBody = Type.Object(
  {
    grant_type: Type.Optional(Type.String()),
    audience: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    client_secret: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)

const TokenResponse = Type.Object({
  access_token: Type.String(),
  scope: Type.String(),
  expires_in: Type.Number(),
  token_type: Type.Literal('Bearer'),
})

/** POST /oauth/token: the client-credentials grant (JSON, form-encoded, HTTP Basic client auth). */
export function oauthRoutes(
  app: FastifyInstance,
  deps: { repos: Repos; key: SigningKey; issuer: string; audience: string },
) {
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
      const body = (request.body ?? {}) as Record<string, string | undefined>
      const basic = basicCredentials(request.headers.authorization)
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
      const client = await deps.repos.clients.get(clientId)
      let valid = false
      if (client && client.revoked_at === null) {
        for (const secret of await deps.repos.clients.activeSecrets(client.id)) {
          if (await verifySecret(clientSecret, secret.secret_hash)) valid = true
        }
      }
      if (!client || !valid) return oauthError(reply, 'invalid_client', 'client authentication failed')
      const granted = parseScopes(client.scopes).scopes as string[]
      let scopes = granted
      if (body.scope !== undefined && body.scope.trim() !== '') {
        const asked = body.scope.split(/\s+/).filter(Boolean)
        const extra = asked.filter((s) => !granted.includes(s))
        if (extra.length > 0)
          return oauthError(reply, 'invalid_scope', `client lacks scope(s): ${extra.join(' ')}`)
        scopes = asked
      }
      const accessToken = await issueToken(deps.key, {
        issuer: deps.issuer,
        audience: deps.audience,
        clientId: client.id,
        orgId: client.org_id,
        scopes,
      })
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
      return {
        access_token: accessToken,
        scope: scopes.join(' '),
        expires_in: TOKEN_TTL_SECONDS,
        token_type: 'Bearer' as const,
      }
    },
  )

  app.get(
    '/.well-known/jwks.json',
    { schema: { tags: ['auth'], summary: 'Public keys that sign access tokens' } },
    async () => ({ keys: [deps.key.publicJwk] }),
  )
}
