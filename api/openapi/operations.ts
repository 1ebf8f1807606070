import { type HeaderName, REPORT_HEADERS } from './headers.ts'

/**
 * What the OpenAPI document says of each operation beyond its route schema, keyed by `METHOD /path` (the
 * document's path, `{param}` style): its operationId, the headers of its 2xx answers, an example request
 * body, and responses documented without a route schema. api/openapi/document.ts applies it to the served
 * document; a route without an entry here is refused when it is registered (api/openapi/check.ts).
 *
 * operationIds are stable once published (the typed client is generated from them): verbs `get` (one
 * thing), `list` (an array), `create` / `add` / `set` / ... for writes. The newest version of a read has the
 * plain name and every `/eth/v0/...` operation ends in `V0`; `/v0/platform` and `/sol/v0` have one version.
 */

/** An operation's additions to the document. */
export interface OperationDoc {
  /** Unique, camelCase, stable. */
  operationId: string
  /** Headers of its 2xx answers (api/openapi/headers.ts), besides X-Request-Id and the rate limit's. */
  headers?: readonly HeaderName[]
  /** An example of the request body (test/openapi-lint.test.ts validates it against the body schema). */
  requestExample?: unknown
  /** Responses documented without a route schema (no serializer of the route changes), by status. */
  responses?: Record<string, { description: string; schema: Record<string, unknown> }>
}

/** A 0x address as the API shows it (lowercase). */
const WALLET = '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549'
/** An account id. */
const ACCOUNT_ID = '6f1c2f0e-3b8a-4d47-9a51-2c7e4b1d9f03'

const LIST: readonly HeaderName[] = ['X-Total-Count']
/** A reporting read answered in JSON or CSV (`Accept: text/csv` or `?format=csv`). */
const CSV_REPORT: readonly HeaderName[] = [...REPORT_HEADERS, 'X-Fee-Models', 'Link', 'Content-Disposition']
const FEES: readonly HeaderName[] = [...REPORT_HEADERS, 'X-Fee-Models', 'Link']
const PROJECTION: readonly HeaderName[] = ['X-Projection-Basis']

/** The JSON Web Key Set of GET /.well-known/jwks.json (RFC 7517); only documented, never serialized by it. */
const JWKS = {
  type: 'object',
  required: ['keys'],
  properties: {
    keys: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kty', 'kid'],
        properties: {
          kty: { type: 'string', description: 'key type, e.g. OKP or EC' },
          kid: { type: 'string', description: 'the key id a token names in its header' },
          alg: { type: 'string' },
          use: { type: 'string', enum: ['sig'] },
          crv: { type: 'string' },
          x: { type: 'string' },
          y: { type: 'string' },
        },
        additionalProperties: true,
      },
    },
  },
}

/** Every operation of the API. */
export const OPERATIONS: Record<string, OperationDoc> = {
  'GET /health': { operationId: 'getHealth' },
  'GET /ready': { operationId: 'getReadiness' },
  'POST /oauth/token': {
    operationId: 'createToken',
    requestExample: {
      grant_type: 'client_credentials',
      audience: 'https://reports.example.com',
      client_id: 'cl_5f0c9a1e7b3d2c4a6e8f0a1b',
      client_secret: 'k7Qm2vX9pL4sR8tY1wZ3bN6cF0hJ5dG2aE4uI7oP9qM',
    },
  },
  'GET /.well-known/jwks.json': {
    operationId: 'getJwks',
    responses: { 200: { description: 'The public keys that sign access tokens', schema: JWKS } },
  },

  'POST /v0/platform/accounts': { operationId: 'createAccount', requestExample: { key: 'customer-8812' } },
  'GET /v0/platform/accounts': { operationId: 'listAccounts', headers: LIST },
  'GET /v0/platform/accounts/{idOrKey}': { operationId: 'getAccount' },
  'PATCH /v0/platform/accounts/{idOrKey}/pause': { operationId: 'pauseAccount' },
  'PATCH /v0/platform/accounts/{idOrKey}/remove': { operationId: 'removeAccount' },
  'PATCH /v0/platform/accounts/{idOrKey}/reactivate': { operationId: 'reactivateAccount' },
  'POST /v0/platform/accounts/{idOrKey}/discount_rate': {
    operationId: 'setAccountDiscountRate',
    requestExample: { target_fee_rate: '0.08' },
  },
  'GET /v0/platform/accounts/{idOrKey}/discount_rate': { operationId: 'listAccountDiscountRates' },
  'GET /v0/platform/wallets/{idOrAddress}': { operationId: 'getWallet' },
  'GET /v0/platform/wallets': { operationId: 'listWallets', headers: LIST },
  'POST /v0/platform/accounts/{idOrKey}/wallets': {
    operationId: 'addWallet',
    requestExample: { address: WALLET, type: 'ETH', allowlisted: true },
  },
  'GET /v0/platform/accounts/{idOrKey}/wallets': { operationId: 'listAccountWallets', headers: LIST },
  'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/pause': { operationId: 'pauseWallet' },
  'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/remove': { operationId: 'removeWallet' },
  'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/reactivate': {
    operationId: 'reactivateWallet',
  },
  'PATCH /v0/depositors/{idOrKey}/wallets/{idOrAddress}/remove': {
    operationId: 'removeDepositorWallet',
    headers: ['Deprecation', 'Link'],
  },

  'GET /sol/v0/allowlist/{address}': { operationId: 'getSolanaAllowlistEntry' },
  'POST /sol/v0/allowlist': {
    operationId: 'setSolanaAllowlistEntry',
    requestExample: {
      address: '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV',
      permissions: { staking: true, redemption: false },
    },
  },

  'GET /eth/v1/redeems': { operationId: 'listRedeems' },
  'GET /eth/v1/redeems/{idx}': { operationId: 'getRedeem' },
  'GET /eth/v1/redeems/{idx}/projection': { operationId: 'getRedeemProjection', headers: PROJECTION },
  'GET /eth/v1/redeems_info': { operationId: 'getRedeemsInfo' },
  'GET /eth/v1/redeems_info/projection': { operationId: 'getRedeemsInfoProjection', headers: PROJECTION },
  'GET /eth/v1/validators/queue': { operationId: 'getValidatorQueue' },
  'GET /eth/v0/redeems': { operationId: 'listRedeemsV0' },
  'GET /eth/v0/redeems/{idx}': { operationId: 'getRedeemV0' },
  'GET /eth/v0/redeems/{idx}/projection': { operationId: 'getRedeemProjectionV0', headers: PROJECTION },
  'GET /eth/v0/redeems_info': { operationId: 'getRedeemsInfoV0' },
  'GET /eth/v0/redeems_info/projection': {
    operationId: 'getRedeemsInfoProjectionV0',
    headers: PROJECTION,
  },

  'POST /eth/v1/rewards': {
    operationId: 'getLotRewards',
    headers: REPORT_HEADERS,
    requestExample: [
      { balance: '32.5', from: '2026-03-02', to: '2026-04-30' },
      { balance: '1.25', from: '2026-04-15' },
    ],
  },
  'POST /eth/v1/rewards/wallets': {
    operationId: 'getWalletRewards',
    headers: [...REPORT_HEADERS, 'Content-Disposition'],
    requestExample: { addresses: [WALLET], date: '2026-04-30' },
  },
  'POST /eth/v1/rewards/accounts': {
    operationId: 'getAccountRewards',
    headers: CSV_REPORT,
    requestExample: { accounts: [ACCOUNT_ID, 'customer-8812'], date: '2026-04-30' },
  },
  'POST /eth/v0/rewards/accounts': {
    operationId: 'getAccountRewardsV0',
    headers: CSV_REPORT,
    requestExample: { accounts: [ACCOUNT_ID], date: '2026-04-30', unit: 'eth' },
  },
  'GET /eth/v1/rewards/wallets/{idOrKey}/summary': {
    operationId: 'getWalletRewardsSummary',
    headers: CSV_REPORT,
  },
  'GET /eth/v1/rewards/accounts/{idOrKey}/summary': {
    operationId: 'getAccountRewardsSummary',
    headers: CSV_REPORT,
  },
  'GET /eth/v0/rewards/wallets/{idOrKey}/summary': {
    operationId: 'getWalletRewardsSummaryV0',
    headers: CSV_REPORT,
  },
  'GET /eth/v0/rewards/accounts/{idOrKey}/summary': {
    operationId: 'getAccountRewardsSummaryV0',
    headers: CSV_REPORT,
  },
  'GET /eth/v1/rewards/organization/summary': {
    operationId: 'getOrganizationRewardsSummary',
    headers: CSV_REPORT,
  },
  'GET /eth/v0/rewards/organization/summary': {
    operationId: 'getOrganizationRewardsSummaryV0',
    headers: CSV_REPORT,
  },
  'GET /eth/v1/platforms/{date}': { operationId: 'getPlatformFees', headers: FEES },
  'GET /eth/v1/originators/{date}': { operationId: 'getOriginatorFees', headers: FEES },
  'GET /eth/v1/operators/{date}': { operationId: 'listOperatorFees', headers: FEES },
  'GET /eth/v0/platforms/{date}': { operationId: 'getPlatformFeesV0', headers: FEES },
  'GET /eth/v0/operators/{date}': { operationId: 'listOperatorFeesV0', headers: FEES },
  'GET /eth/v0/protocol/{date}': { operationId: 'getProtocolRecordV0', headers: REPORT_HEADERS },
  'GET /v1/reports/{date}/versions': {
    operationId: 'listReportVersions',
    headers: REPORT_HEADERS.filter((h) => h !== 'ETag'),
  },

  'GET /v1/admin/days': { operationId: 'listDays' },
  'POST /v1/admin/backfill': {
    operationId: 'startBackfill',
    requestExample: { from: '2026-04-01', to: '2026-04-30', recompute: true, reason: 'discount' },
  },

  'POST /v1/webhooks': {
    operationId: 'createWebhook',
    requestExample: {
      url: 'https://hooks.example.com/lsreport',
      events: ['day.finalized', 'redeem.satisfied'],
      description: 'finance ledger sync',
    },
  },
  'GET /v1/webhooks': { operationId: 'listWebhooks', headers: LIST },
  'GET /v1/webhooks/{id}': { operationId: 'getWebhook' },
  'DELETE /v1/webhooks/{id}': { operationId: 'deleteWebhook' },
  'POST /v1/webhooks/{id}/resume': { operationId: 'resumeWebhook' },
  'GET /v1/webhooks/{id}/deliveries': { operationId: 'listWebhookDeliveries' },
  'POST /v1/webhooks/{id}/deliveries/{deliveryId}/replay': { operationId: 'replayWebhookDelivery' },

  'POST /v1/exports': {
    operationId: 'createExport',
    requestExample: {
      from: '2026-04-01',
      to: '2026-06-30',
      kind: 'journal',
      granularity: 'month',
      currency: 'usd',
    },
  },
  'GET /v1/exports/{id}': { operationId: 'getExport' },
  'GET /v1/exports/{id}/download': {
    operationId: 'downloadExport',
    headers: ['Content-Disposition', 'ETag'],
  },
}

/**
 * The key of an operation in OPERATIONS: its method and its path in the document (`:param` -> `{param}`).
 *
 * @example
 * operationKey('get', '/v0/platform/accounts/:idOrKey') // 'GET /v0/platform/accounts/{idOrKey}'
 */
export function operationKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`
}
