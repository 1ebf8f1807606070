import { randomUUID } from 'node:crypto'
import { type JWTPayload, jwtVerify, SignJWT } from 'jose'
import type { SigningKey } from './keys.ts'
import type { SigningKeys } from './signing-keys.ts'

/** The default lifetime of an access token (TOKEN_TTL_SECONDS sets the service's). */
export const TOKEN_TTL_SECONDS = 86_400

/** What a verified access token says about its caller. */
export interface TokenClaims {
  clientId: string
  orgId: string
  scopes: string[]
  jti: string
  exp: number
  /** The signing key that verified it: a token verified before is honoured only while this key is live. */
  kid: string
}

/**
 * Issues an ES256 access token with iss, aud, sub (client id), org_id, scope, iat, exp (iat + `ttlSeconds`,
 * default `TOKEN_TTL_SECONDS`), jti; its header names the key (kid).
 *
 * @example
 * const jwt = await issueToken(key, { issuer, audience, clientId: 'cl_1', orgId: 'org_1', scopes: ['read:platform'] })
 */
export async function issueToken(
  key: SigningKey,
  input: {
    issuer: string
    audience: string
    clientId: string
    orgId: string
    scopes: string[]
    now?: number
    ttlSeconds?: number
  },
): Promise<string> {
  const iat = input.now ?? Math.floor(Date.now() / 1000)
  return new SignJWT({ org_id: input.orgId, scope: input.scopes.join(' ') })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
    .setIssuer(input.issuer)
    .setAudience(input.audience)
    .setSubject(input.clientId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (input.ttlSeconds ?? TOKEN_TTL_SECONDS))
    .setJti(randomUUID())
    .sign(key.privateKey)
}

/**
 * Creates a verifier bound to the service's live signing keys (any of them, by the token's kid), issuer and
 * audience. Throws on any failure: a `SigningKeyError` for an unknown or retired key, jose's errors otherwise.
 *
 * @example
 * const verify = createTokenVerifier(keys, { issuer, audience })
 * const claims = await verify(jwt)
 */
export function createTokenVerifier(
  keys: Pick<SigningKeys, 'verificationKey'>,
  expected: { issuer: string; audience: string },
) {
  const keyOf = (header: { kid?: string | undefined }) => keys.verificationKey(header.kid)
  return async (token: string): Promise<TokenClaims> => {
    const { payload, protectedHeader } = await jwtVerify<JWTPayload & { org_id?: unknown; scope?: unknown }>(
      token,
      keyOf,
      {
        issuer: expected.issuer,
        audience: expected.audience,
        algorithms: ['ES256'],
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      },
    )
    if (typeof payload.org_id !== 'string' || typeof payload.scope !== 'string') {
      throw new Error('token lacks org_id or scope')
    }
    return {
      clientId: payload.sub!,
      orgId: payload.org_id,
      scopes: payload.scope.split(' ').filter(Boolean),
      jti: payload.jti!,
      exp: payload.exp!,
      // verificationKey refused a token without a kid: the header has one here
      kid: protectedHeader.kid!,
    }
  }
}
