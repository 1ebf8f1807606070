import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../errors.ts'
import type { SigningKey } from './keys.ts'
import type { Scope } from './scopes.ts'
import { createTokenVerifier, type TokenClaims } from './tokens.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller; set by `requireScope` hooks. */
    auth: TokenClaims | undefined
  }
  interface FastifyInstance {
    /** onRequest hook: verifies the bearer token (401) and the scope (403). */
    requireScope(scope: Scope): onRequestHookHandler
  }
}

/** The verified caller of an authenticated route (throws when the route has no auth hook). */
export function caller(request: FastifyRequest): TokenClaims {
  if (!request.auth) throw new Error('route has no auth hook')
  return request.auth
}

/** Bearer-token verification (ES256 JWT: signature, iss, aud, exp) and per-route scope checks. */
export const authPlugin = fp(
  async (app: FastifyInstance, options: { key: SigningKey; issuer: string; audience: string }) => {
    const verifySignature = createTokenVerifier(options.key, {
      issuer: options.issuer,
      audience: options.audience,
    })
    // A token is immutable: once its signature, issuer and audience are verified, only its expiry can
    // change the answer. Verified tokens are cached (bounded) and their expiry checked on every request.
    const verified = new Map<string, TokenClaims>()
    const verify = async (token: string): Promise<TokenClaims> => {
      const hit = verified.get(token)
      if (hit) {
        if (hit.exp * 1000 > Date.now()) return hit
        verified.delete(token)
        throw Object.assign(new Error('token expired'), { code: 'ERR_JWT_EXPIRED' })
      }
      const claims = await verifySignature(token)
      if (verified.size >= 10_000) verified.delete(verified.keys().next().value as string)
      verified.set(token, claims)
      return claims
    }
    app.decorateRequest('auth', undefined)
    app.decorate('requireScope', (scope: Scope): onRequestHookHandler => {
      return async (request) => {
        const header = request.headers.authorization
        const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null
        if (!match) {
          throw new ApiError('IR2000', 'missing bearer token: send Authorization: Bearer <access_token>', {
            headers: { 'www-authenticate': 'Bearer' },
          })
        }
        try {
          request.auth = await verify(match[1]!)
        } catch (err) {
          const expired = (err as { code?: string }).code === 'ERR_JWT_EXPIRED'
          throw new ApiError(
            'IR2001',
            expired ? 'access token expired: request a new one' : 'invalid access token',
            {
              headers: { 'www-authenticate': `Bearer error="invalid_token"` },
            },
          )
        }
        if (!request.auth.scopes.includes(scope)) {
          throw new ApiError('IR2002', `this endpoint needs the ${scope} scope`, {
            headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
          })
        }
      }
    })
  },
  { name: 'lsreport-auth' },
)
