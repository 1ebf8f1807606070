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

/** Input that breaks a documented rule (maps to an HTTP 400 in the API). */
export class ValidationError extends LsReportError {
  override name = 'ValidationError'
}

/** The named resource does not exist for the caller (HTTP 404). */
export class NotFoundError extends LsReportError {
  override name = 'NotFoundError'
}

/** The request conflicts with the resource's current state (HTTP 400 with a state code). */
export class StateError extends LsReportError {
  override name = 'StateError'
}
