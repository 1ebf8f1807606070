import createClient, { type Client } from 'openapi-fetch'
import { bearerAuth } from './bearer.ts'
import type { paths } from './schema.d.ts'
import { type ClientCredentialsOptions, clientCredentialsTokens } from './tokens.ts'

export { bearerAuth } from './bearer.ts'
export type { components, operations, paths } from './schema.d.ts'
export {
  type ClientCredentialsOptions,
  clientCredentialsTokens,
  TokenRequestError,
  type TokenSource,
} from './tokens.ts'

/** The typed client: openapi-fetch over every path, method, parameter, body and answer of the API. */
export type LsReportClient = Client<paths>

/**
 * A typed client of the lsreport API at `baseUrl` that authenticates by itself: a token by OAuth 2.0 client
 * credentials from the service's token endpoint (POST /oauth/token), reused until shortly before it expires,
 * and one retry with a new token when a request is answered 401 (`bearerAuth`, `clientCredentialsTokens`).
 *
 * @example
 * const client = createLsReportClient({ baseUrl: 'https://reports.example.com', clientId, clientSecret })
 * const { data, error } = await client.POST('/v0/platform/accounts', { body: { key: 'customer-8812' } })
 * if (error) throw new Error(error.message)
 * console.log(data.id, data.status) // typed: the Account of the OpenAPI document
 */
export function createLsReportClient(options: ClientCredentialsOptions): LsReportClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  })
  client.use(bearerAuth(clientCredentialsTokens(options)))
  return client
}
