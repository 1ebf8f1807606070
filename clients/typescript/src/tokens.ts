import createClient from 'openapi-fetch'
import type { paths } from './schema.d.ts'

/** How to get tokens: the service's client-credentials grant (POST {authUrl}/oauth/token). */
export interface ClientCredentialsOptions {
  /** The API's base URL, e.g. `https://reports.example.com`: the default audience and token host. */
  baseUrl: string
  clientId: string
  clientSecret: string
  /** Space-separated scopes to ask for; default: every scope the client was granted. */
  scope?: string
  /** Base URL of the token endpoint when it is not the API's ({auth_url}); default: `baseUrl`. */
  authUrl?: string
  /** The token's audience: the API's public base URL (its BASE_URL); default: `baseUrl`. */
  audience?: string
  /** The fetch to call with; default: the global one. */
  fetch?: (input: Request) => Promise<Response>
}

/** A source of access tokens that reuses one until shortly before it expires. */
export interface TokenSource {
  /** A token valid for a while yet: the cached one, else a new one (concurrent callers share one request). */
  token(): Promise<string>
  /** Forgets `token` if it is the cached one (the API refused it): the next `token()` asks for a new one. */
  invalidate(token: string): void
}

/** The token endpoint refused (an unknown client, a wrong secret, a scope not granted, a wrong audience). */
export class TokenRequestError extends Error {
  override readonly name = 'TokenRequestError'
  constructor(
    message: string,
    /** The HTTP status of the refusal (0: no answer). */
    readonly status: number,
    /** The answer's body: `{error, error_description, message, status}` for an OAuth error. */
    readonly body: unknown,
  ) {
    super(message)
  }
}

/** A token is renewed this long before it expires: a tenth of its lifetime, at most a minute. */
function renewalMarginMs(expiresInSeconds: number): number {
  return Math.min(60_000, (expiresInSeconds * 1000) / 10)
}

const stripSlashes = (url: string) => url.replace(/\/+$/, '')

/**
 * Access tokens by OAuth 2.0 client credentials (RFC 6749 §4.4) from the service's token endpoint, as a JSON
 * body `{grant_type, client_id, client_secret, audience, scope?}`. A token is reused until shortly before its
 * `expires_in` (counted from when it was asked for), then a new one is asked for.
 *
 * @example
 * const tokens = clientCredentialsTokens({ baseUrl, clientId, clientSecret })
 * const res = await fetch(`${baseUrl}/v0/platform/accounts`, {
 *   headers: { authorization: `Bearer ${await tokens.token()}` },
 * })
 */
export function clientCredentialsTokens(options: ClientCredentialsOptions): TokenSource {
  const audience = stripSlashes(options.audience ?? options.baseUrl)
  const endpoint = createClient<paths>({
    baseUrl: stripSlashes(options.authUrl ?? options.baseUrl),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  })
  let cached: { token: string; renewAt: number } | undefined
  let pending: Promise<string> | undefined

  async function request(): Promise<string> {
    const askedAt = Date.now()
    const { data, error, response } = await endpoint.POST('/oauth/token', {
      body: {
        grant_type: 'client_credentials',
        client_id: options.clientId,
        client_secret: options.clientSecret,
        audience,
        ...(options.scope === undefined ? {} : { scope: options.scope }),
      },
    })
    if (!data) {
      const described = (error as { error_description?: unknown } | undefined)?.error_description
      const reason = typeof described === 'string' ? described : response.statusText
      throw new TokenRequestError(
        `token request refused: ${response.status} ${reason}`,
        response.status,
        error,
      )
    }
    cached = {
      token: data.access_token,
      renewAt: askedAt + data.expires_in * 1000 - renewalMarginMs(data.expires_in),
    }
    return data.access_token
  }

  return {
    token() {
      if (cached && Date.now() < cached.renewAt) return Promise.resolve(cached.token)
      pending ??= request().finally(() => {
        pending = undefined
      })
      return pending
    },
    invalidate(token) {
      if (cached?.token === token) cached = undefined
    },
  }
}
