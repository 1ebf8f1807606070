import type { Middleware } from 'openapi-fetch'
import type { TokenSource } from './tokens.ts'

/**
 * openapi-fetch middleware that sends `Authorization: Bearer <token>` from `tokens` with every request and,
 * when the API answers 401 (the token expired early, was revoked or its signing key retired), drops that
 * token and sends the request once more with a new one. A second 401 is the answer. A request another
 * middleware replaces after this one (returns a new Request) is not sent again.
 *
 * @example
 * const client = createClient<paths>({ baseUrl })
 * client.use(bearerAuth(clientCredentialsTokens({ baseUrl, clientId, clientSecret })))
 */
export function bearerAuth(tokens: TokenSource): Middleware {
  /** Each request in flight: a copy made before it was sent (its body unread), and the token it carries. */
  const sent = new WeakMap<Request, { copy: Request; token: string }>()
  return {
    async onRequest({ request }) {
      const token = await tokens.token()
      request.headers.set('authorization', `Bearer ${token}`)
      sent.set(request, { copy: request.clone(), token })
      return request
    },
    async onResponse({ request, response, options }) {
      const first = sent.get(request)
      sent.delete(request)
      if (response.status !== 401 || !first) return undefined
      tokens.invalidate(first.token)
      const retry = first.copy
      retry.headers.set('authorization', `Bearer ${await tokens.token()}`)
      // the refused answer's body is not read: release it
      await response.body?.cancel()
      return options.fetch(retry)
    },
  }
}
