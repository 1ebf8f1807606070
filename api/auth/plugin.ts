import type {} from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { LRUCache } from 'lru-cache'
import { ApiError } from '../errors.ts'
import { SigningKeyError } from './errors.ts'
import { type ClientStatusCache, type ClientStatusLookup, createClientStatusCache } from './revocation.ts'
import type { Scope } from './scopes.ts'
import type { KeyLiveness, SigningKeys } from './signing-keys.ts'
import { createTokenVerifier, type TokenClaims } from './tokens.ts'

/** Counts requests refused by auth per client address; over the budget they answer 429. */
export interface AuthFailures {
  /** Seconds to wait when the address has used its budget of refused requests, else undefined. */
  blocked(request: FastifyRequest): Promise<number | undefined>
  /** Counts one refused request; returns the seconds to wait when this one is over the budget. */
  record(request: FastifyRequest): Promise<number | undefined>
  /** The 429 IR1005 error to throw, with its Retry-After. */
  tooMany(retryAfterSeconds: number): ApiError
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller; set by `requireScope` hooks. */
    auth: TokenClaims | undefined
  }
  interface FastifyInstance {
    /** onRequest hook: verifies the bearer token and its client (401), the scope (403). */
    requireScope(scope: Scope): onRequestHookHandler
    /** Where the token check reads client statuses (revocation); set once by the token routes. */
    useClientStatus(lookup: ClientStatusLookup): void
    /** The per-address budget of requests refused by auth (bearer checks and the token endpoint). */
    authFailures: AuthFailures
  }
}

/** The verified caller of an authenticated route (throws when the route has no auth hook). */
export function caller(request: FastifyRequest): TokenClaims {
  if (!request.auth) throw new Error('route has no auth hook')
  return request.auth
}

const REFUSED_BY_AUTH = new Set(['IR2000', 'IR2001', 'IR2002', 'IR2003'])
const BEARER = /^Bearer\s+(\S+)\s*$/i

/** Per connection, its last Authorization header and the bearer token in it (`bearerToken`). */
const lastBearer = new WeakMap<object, { header: string; token: string }>()

/**
 * The bearer token of a request's Authorization header (undefined: none, or not a bearer one). A client on
 * a keep-alive connection sends the same header on every request: the token parsed from it is kept per
 * connection, and an identical header gives the same token string back, whose hash V8 keeps, so the lookup in
 * the verified tokens does not hash its ~600 characters again (~2 µs a request, bench:api).
 */
function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (header === undefined) return undefined
  const connection = request.raw.socket as object | null | undefined
  const last = connection ? lastBearer.get(connection) : undefined
  if (last !== undefined && last.header === header) return last.token
  const match = BEARER.exec(header)
  if (!match) return undefined
  const token = match[1] as string
  if (connection) lastBearer.set(connection, { header, token })
  return token
}

/** 401 IR2001 for a token that is not (or no longer) valid. */
function invalidToken(message: string): ApiError {
  return new ApiError('IR2001', message, { headers: { 'www-authenticate': `Bearer error="invalid_token"` } })
}

function createAuthFailures(app: FastifyInstance): AuthFailures {
  // the app's rate-limit store (Redis when configured, so every API instance shares the counts), the same
  // budget as the per-client limit, counted per client address
  const limiter = app.createRateLimit({
    keyGenerator: (request) => `auth-refused-${request.ip}`,
    skipOnError: true,
  })
  let windowMs = 60_000
  let max = 0
  const tooMany = (retryAfter: number) =>
    new ApiError(
      'IR1005',
      `too many requests refused by authentication from this address (at most ${max} per ` +
        `${Math.round(windowMs / 1000)} s): retry in ${retryAfter} s`,
      { headers: { 'retry-after': String(retryAfter) } },
    )
  const seconds = (ttlMs: number) => Math.max(1, Math.ceil(ttlMs / 1000))
  return {
    async blocked(request) {
      const r = await limiter(request, { increment: false })
      if (r.isAllowed) return undefined
      max = r.max
      windowMs = r.timeWindow
      return r.remaining === 0 && r.ttl > 0 ? seconds(r.ttl) : undefined
    },
    async record(request) {
      const r = await limiter(request)
      if (r.isAllowed) return undefined
      max = r.max
      windowMs = r.timeWindow
      return r.isExceeded ? seconds(r.ttl) : undefined
    },
    tooMany,
  }
}

const RETIRED_KEY = 'access token signed by a retired signing key: request a new one'
const INVALID = 'invalid access token'

/** The 401 message of a token whose signature, key or claims failed. */
function refusalMessage(err: unknown): string {
  if ((err as { code?: string }).code === 'ERR_JWT_EXPIRED') return 'access token expired: request a new one'
  if (err instanceof SigningKeyError && err.problem === 'retired') return RETIRED_KEY
  return INVALID
}

/**
 * Bearer-token verification (ES256 JWT: signature by a live signing key, whichever API process signed it, the
 * key checked again on every use of a token verified before; iss, aud, exp; the token's client still exists and
 * is not revoked), per-route scope checks and the `Impersonate-Org` scope check (403 IR2003 without
 * `impersonate:org`). Requests refused here count against a per-address budget (the rate-limit store): over it
 * they answer 429 IR1005 with Retry-After instead of 401/403.
 */
export const authPlugin = fp(
  async (
    app: FastifyInstance,
    options: { keys: SigningKeys; issuer: string; audience: string; clients?: ClientStatusLookup },
  ) => {
    const verifySignature = createTokenVerifier(options.keys, {
      issuer: options.issuer,
      audience: options.audience,
    })
    // A token is immutable: once its signature, issuer and audience are verified, only its expiry, its key
    // and its client's status can change the answer. Verified tokens are cached by the raw token for their
    // remaining lifetime (least recently used evicted first); on every request, cached or not, the expiry is
    // checked, the key against the live key set (held at most KEY_REFRESH_MS: a key retired or removed by any
    // process or the CLI stops its cached tokens as it stops unseen ones) and the client's status through a
    // cache of a few seconds (revocation).
    const verified = new LRUCache<string, TokenClaims>({ max: 10_000 })
    /** The claims of a token verified before (throws when it has expired since), else undefined. */
    const verifiedBefore = (token: string): TokenClaims | undefined => {
      const hit = verified.get(token)
      if (hit && hit.exp * 1000 <= Date.now()) {
        verified.delete(token)
        throw invalidToken('access token expired: request a new one')
      }
      return hit
    }
    const verify = async (token: string): Promise<TokenClaims> => {
      let claims: TokenClaims
      try {
        claims = await verifySignature(token)
      } catch (err) {
        throw invalidToken(refusalMessage(err))
      }
      verified.set(token, claims)
      return claims
    }
    /** A token verified before whose key no longer verifies: forgotten, and refused as an unseen one is. */
    const keyGone = (token: string, liveness: KeyLiveness): ApiError => {
      verified.delete(token)
      return invalidToken(liveness === 'retired' ? RETIRED_KEY : INVALID)
    }
    let clients: ClientStatusCache | undefined = options.clients
      ? createClientStatusCache(options.clients)
      : undefined
    const failures = createAuthFailures(app)

    app.decorate('authFailures', failures)
    app.decorate('useClientStatus', (lookup: ClientStatusLookup) => {
      clients = createClientStatusCache(lookup)
    })
    app.decorateRequest('auth', undefined)

    /** The checks after the token's signature: its client (fail closed without a status source), the scope. */
    const admit = (request: FastifyRequest, scope: Scope, claims: TokenClaims, active: boolean) => {
      if (!active) throw invalidToken('access token revoked: its client was revoked')
      if (!claims.scopes.includes(scope)) {
        throw new ApiError('IR2002', `this endpoint needs the ${scope} scope`, {
          headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
        })
      }
      // docs/decisions.md "Impersonation": the header needs its scope (counted as a refusal by auth); on the
      // routes that declare it the request then acts as the named organization once delegated, every other
      // route refused it (400 IR2009) before this check (api/auth/impersonation.ts `registerImpersonation`)
      if (request.headers['impersonate-org'] !== undefined && !claims.scopes.includes('impersonate:org')) {
        throw new ApiError('IR2003', 'Impersonate-Org needs the impersonate:org scope')
      }
      request.auth = claims
    }
    const clientsOrFail = (): ClientStatusCache => {
      if (!clients) throw new Error('auth plugin: no client status source (useClientStatus was not called)')
      return clients
    }
    const authenticateLater = async (
      request: FastifyRequest,
      scope: Scope,
      token: string,
      held: TokenClaims | undefined,
    ) => {
      let claims: TokenClaims
      if (held) {
        const liveness = await options.keys.keyStatus(held.kid)
        if (liveness !== 'live') throw keyGone(token, liveness)
        claims = held
      } else claims = await verify(token)
      admit(request, scope, claims, await clientsOrFail().active(claims.clientId, claims.orgId))
    }
    /**
     * Sets `request.auth` or throws: synchronously (undefined) when the token was verified before, the key set
     * and its client's status are held (every request but a client's first in a few seconds), else a promise.
     */
    const authenticate = (request: FastifyRequest, scope: Scope): Promise<void> | undefined => {
      const token = bearerToken(request)
      if (token === undefined) {
        throw new ApiError('IR2000', 'missing bearer token: send Authorization: Bearer <access_token>', {
          headers: { 'www-authenticate': 'Bearer' },
        })
      }
      const claims = verifiedBefore(token)
      const liveness = claims ? options.keys.keyStatusNow(claims.kid) : undefined
      if (liveness !== undefined && liveness !== 'live') throw keyGone(token, liveness)
      const active = claims && liveness ? clientsOrFail().activeNow(claims.clientId, claims.orgId) : undefined
      if (claims === undefined || active === undefined)
        return authenticateLater(request, scope, token, claims)
      admit(request, scope, claims, active)
      return undefined
    }
    /** Passes a refusal on, counted against the address's budget first (429 once it is used up). */
    const refuse = (request: FastifyRequest, err: unknown, done: (err?: Error) => void) => {
      if (!(err instanceof ApiError && REFUSED_BY_AUTH.has(err.code))) return done(err as Error)
      failures.record(request).then(
        (retryAfter) => done(retryAfter === undefined ? err : failures.tooMany(retryAfter)),
        (error) => done(error as Error),
      )
    }

    app.decorate('requireScope', (scope: Scope): onRequestHookHandler => {
      // a callback hook: a request whose token and client status are held is admitted with no promise
      return (request, _reply, done) => {
        let pending: Promise<void> | undefined
        try {
          pending = authenticate(request, scope)
        } catch (err) {
          return refuse(request, err, done)
        }
        if (!pending) return done()
        pending.then(
          () => done(),
          (err) => refuse(request, err, done),
        )
      }
    })
  },
  { name: 'lsreport-auth', dependencies: ['@fastify/rate-limit'] },
)
