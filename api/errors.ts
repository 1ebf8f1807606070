import { DomainError, type ErrorReason, LsReportError } from '../common/errors.ts'
import { InvalidInputError, ReportRangeError } from '../engine/index.ts'

/**
 * The error catalog: every `IR####` code the API answers with, its HTTP status and meaning.
 * Published in README.md ("Error catalog"); a test checks that the two agree.
 */
export const ERROR_CATALOG = {
  IR1000: { http: 400, meaning: 'Invalid request: a field failed validation (the message names it).' },
  IR1001: { http: 400, meaning: 'Malformed JSON body, or one with a key twice in an object.' },
  IR1002: { http: 413, meaning: 'Request body larger than 1 MiB.' },
  IR1003: { http: 415, meaning: 'Unsupported content type (send application/json).' },
  IR1004: { http: 404, meaning: 'Route not found.' },
  IR1005: { http: 429, meaning: 'Rate limit exceeded for this client; retry after the Retry-After header.' },
  IR1006: { http: 400, meaning: 'Too many items in one request (ids, lots, accounts or addresses).' },
  IR1007: { http: 431, meaning: 'URL and headers larger than 16 KiB (often a query string too long).' },
  IR1008: { http: 408, meaning: 'The request was not received in time.' },
  IR2000: { http: 401, meaning: 'Missing bearer token.' },
  IR2001: { http: 401, meaning: 'Invalid or expired bearer token.' },
  IR2002: { http: 403, meaning: 'The token lacks the scope this endpoint needs.' },
  IR2003: { http: 403, meaning: 'Impersonate-Org needs the impersonate:org scope.' },
  IR2004: { http: 400, meaning: 'Token request: invalid_request (missing field or wrong audience).' },
  IR2005: { http: 401, meaning: 'Token request: invalid_client (unknown client, wrong secret or revoked).' },
  IR2006: { http: 400, meaning: 'Token request: unsupported_grant_type (only client_credentials).' },
  IR2007: { http: 400, meaning: 'Token request: invalid_scope (a scope the client does not have).' },
  IR2008: { http: 403, meaning: 'Impersonation refused: no delegation to your org, or no such org.' },
  IR2009: { http: 400, meaning: 'Impersonate-Org sent to a route that does not honour it.' },
  IR3000: { http: 404, meaning: 'Account not found.' },
  IR3001: { http: 400, meaning: 'Account key is empty or longer than 256 characters.' },
  IR3002: { http: 400, meaning: 'An account with this key already exists in the organization.' },
  IR3003: { http: 400, meaning: 'Account status transition not allowed.' },
  IR3004: { http: 400, meaning: 'The account is not ACTIVE: it accepts no new wallets.' },
  IR3005: { http: 400, meaning: 'The account is REMOVED or DENIED: its target fee rate cannot change.' },
  IR3100: { http: 404, meaning: 'Wallet not found.' },
  IR3101: { http: 400, meaning: 'Invalid wallet address (0x followed by 40 hex digits).' },
  IR3102: { http: 400, meaning: 'Mixed-case wallet address fails its EIP-55 checksum.' },
  IR3103: { http: 400, meaning: 'The address is attached to a wallet already (of any platform).' },
  IR3104: { http: 403, meaning: 'The organization is not permitted to allowlist wallets.' },
  IR3105: { http: 400, meaning: 'Wallet status transition not allowed.' },
  IR3106: { http: 400, meaning: 'Unsupported wallet type (only ETH).' },
  IR3107: { http: 400, meaning: 'The zero address cannot be a wallet.' },
  IR3200: { http: 400, meaning: 'target_fee_rate must be between 0 and the gross protocol fee rate.' },
  IR3300: { http: 400, meaning: 'Invalid Solana address (base58 of 32 bytes).' },
  IR3400: { http: 404, meaning: 'Redeem request not found.' },
  IR3600: { http: 404, meaning: 'Webhook not found.' },
  IR3601: { http: 400, meaning: 'Webhook URL refused: not http(s), has credentials, or a private address.' },
  IR3602: { http: 404, meaning: 'Webhook delivery not found.' },
  IR3700: {
    http: 400,
    meaning:
      'A tenant limit was reached (webhooks per organization, API clients, secrets per client): the message names it.',
  },
  IR3800: { http: 404, meaning: 'Export not found.' },
  IR3801: { http: 403, meaning: 'Download link refused: its signature does not match this export.' },
  IR3802: {
    http: 410,
    meaning: 'Download link expired (ask GET /v1/exports/{id} for a new one), or the file is gone.',
  },
  IR4000: { http: 404, meaning: 'No computed report for this date (none yet, or before the first report).' },
  IR4001: { http: 400, meaning: 'Invalid date range: from after to, outside the reports, or too long.' },
  IR5000: { http: 500, meaning: 'Internal error (details are logged with the request id, never returned).' },
  IR5030: { http: 503, meaning: 'Service not ready (database unreachable: retry; or migrations pending).' },
  IR5031: { http: 503, meaning: 'No consensus-layer snapshot stored yet (the consensus job writes it).' },
} as const satisfies Record<string, { http: number; meaning: string }>

export type ErrorCode = keyof typeof ERROR_CATALOG

/** An error the API returns as `{message, status}` with the catalog's HTTP status. */
export class ApiError extends LsReportError {
  override name = 'ApiError'
  readonly code: ErrorCode
  readonly http: number
  readonly headers: Record<string, string>

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options)
    this.code = code
    this.http = ERROR_CATALOG[code].http
    this.headers = options.headers ?? {}
  }
}

/**
 * The one mapping from a domain error's `reason` (common/errors.ts) to its catalog code: platform rules and
 * address checks throw domain errors, the API answers with these codes (the CLI shows the message).
 */
export const REASON_CODES = {
  invalid_input: 'IR1000',
  invalid_address: 'IR3101',
  address_checksum: 'IR3102',
  zero_address: 'IR3107',
  wallet_type: 'IR3106',
  account_key: 'IR3001',
  account_key_taken: 'IR3002',
  address_taken: 'IR3103',
  account_not_found: 'IR3000',
  wallet_not_found: 'IR3100',
  account_transition: 'IR3003',
  account_not_active: 'IR3004',
  account_final: 'IR3005',
  wallet_transition: 'IR3105',
  allowlist_not_permitted: 'IR3104',
  tenant_limit: 'IR3700',
} as const satisfies Record<ErrorReason, ErrorCode>

/**
 * The one mapping of input errors to the catalog: a domain error answers with the code of its reason, an
 * engine `InvalidInputError` (a date, amount or range a calculator refused) with 400 IR1000, its
 * `ReportRangeError` with 400 IR4001, each with its message; undefined for any other error (the engine's
 * operator and data faults, FeeScheduleError and RedeemStateError, stay 500). Whichever route an input error
 * escapes from, the error handler answers it through this (api/error-reply.ts): never a 5xx.
 *
 * @example
 * apiErrorOf(new NotFoundError('account "a" not found', { reason: 'account_not_found' }))?.code // 'IR3000'
 * apiErrorOf(new InvalidInputError('timestamp must be non-negative'))?.code // 'IR1000'
 */
export function apiErrorOf(err: unknown): ApiError | undefined {
  if (err instanceof DomainError) {
    return new ApiError(REASON_CODES[err.reason], err.message, { details: err.details ?? {}, cause: err })
  }
  if (err instanceof ReportRangeError) return new ApiError('IR4001', err.message, { cause: err })
  if (err instanceof InvalidInputError) return new ApiError('IR1000', err.message, { cause: err })
  return undefined
}

/** The body of every non-2xx response. */
export interface ErrorBody {
  message: string
  status: ErrorCode
}
