/**
 * Base error of the service: a short message, optional structured details and a cause.
 * Each folder keeps its subclasses in its own `errors.ts`; the API maps them to `IR####` codes
 * through one catalog (`api/errors.ts`).
 *
 * @example
 * throw new LsReportError('wallet not found', { details: { address } })
 */
export class LsReportError extends Error {
  override name = 'LsReportError'
  readonly details: Record<string, unknown> | undefined

  constructor(message: string, options: { details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.details = options.details
  }
}

/** A configuration value is missing or invalid; the message names the variable. */
export class ConfigError extends LsReportError {
  override name = 'ConfigError'
}

/**
 * Machine-readable reasons of the domain errors: the API maps each to one `IR####` code
 * (`api/errors.ts`, `REASON_CODES`), the CLI shows the message.
 */
export const ERROR_REASONS = [
  'invalid_input',
  'invalid_address',
  'address_checksum',
  'zero_address',
  'wallet_type',
  'account_key',
  'account_key_taken',
  'address_taken',
  'account_not_found',
  'wallet_not_found',
  'account_transition',
  'account_not_active',
  'account_final',
  'wallet_transition',
  'allowlist_not_permitted',
  'tenant_limit',
] as const

/** One of `ERROR_REASONS`. */
export type ErrorReason = (typeof ERROR_REASONS)[number]

/** Options of a domain error: the base options and its machine-readable reason. */
export interface DomainErrorOptions {
  reason: ErrorReason
  details?: Record<string, unknown>
  cause?: unknown
}

/** A broken business rule (not a fault): carries a `reason` the API maps to its code. */
export abstract class DomainError extends LsReportError {
  readonly reason: ErrorReason

  constructor(message: string, options: DomainErrorOptions) {
    super(message, options)
    this.reason = options.reason
  }
}

/**
 * Input that breaks a documented rule (an HTTP 400 in the API); reason `invalid_input` unless given.
 *
 * @example
 * throw new ValidationError('type must be ETH', { reason: 'wallet_type' })
 */
export class ValidationError extends DomainError {
  override name = 'ValidationError'

  constructor(message: string, options: Partial<DomainErrorOptions> = {}) {
    super(message, { ...options, reason: options.reason ?? 'invalid_input' })
  }
}

/** The named resource does not exist for the caller (HTTP 404). */
export class NotFoundError extends DomainError {
  override name = 'NotFoundError'
}

/** The request conflicts with the current state of a resource or organization (HTTP 400 or 403). */
export class StateError extends DomainError {
  override name = 'StateError'
}

/** Why a sealed value (common/sealed.ts) does not open. */
export type SealProblem = 'wrong_secret' | 'tampered' | 'malformed'

/**
 * A sealed value that does not open: sealed under another secret (`sealedUnder` and `openedWith` give both
 * fingerprints), altered (the GCM tag fails) or not a sealed value this version reads. Each user of the
 * sealing words its own message over it (api/auth/sealed-key.ts, db/webhook-secrets.ts).
 *
 * @example
 * throw new SealedValueError('tampered', { cause })
 */
export class SealedValueError extends LsReportError {
  override name = 'SealedValueError'
  readonly problem: SealProblem
  readonly sealedUnder: string | undefined
  readonly openedWith: string | undefined

  constructor(
    problem: SealProblem,
    options: { sealedUnder?: string; openedWith?: string; cause?: unknown } = {},
  ) {
    super(`sealed value refused: ${problem}`, options.cause === undefined ? {} : { cause: options.cause })
    this.problem = problem
    this.sealedUnder = options.sealedUnder
    this.openedWith = options.openedWith
  }
}
