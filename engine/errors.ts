/**
 * Errors of the pure engine. The engine may not import `common/`, so it keeps its own small base class
 * with the same shape as the service's base error (message, details, cause) plus a stable `code` the API
 * can map to an `IR####` status.
 */

/** Stable machine-readable codes of engine errors (the API maps them to its catalog). */
export type EngineErrorCode =
  | 'INVALID_INPUT'
  | 'INVALID_DECIMAL'
  | 'INVALID_DATE'
  | 'LOT_RANGE_INVERTED'
  | 'DATE_BEFORE_FIRST_REPORT'
  | 'DATE_AFTER_LATEST_REPORT'
  | 'NO_REPORTS'
  | 'TARGET_FEE_RATE_OUT_OF_RANGE'
  | 'FEE_SCHEDULE_INVALID'
  | 'FEE_SCHEDULE_MISSING'
  | 'REDEEM_STATE_INVALID'
  | 'INVARIANT_VIOLATED'

/** Options of every engine error. */
export interface EngineErrorOptions {
  code?: EngineErrorCode
  details?: Record<string, unknown>
  cause?: unknown
}

/**
 * Base error of `engine/`: a short message, a stable code, optional details and cause.
 *
 * @example
 * throw new EngineError('supply must be positive', { code: 'INVALID_INPUT', details: { supply: '0' } })
 */
export class EngineError extends Error {
  override name = 'EngineError'
  readonly code: EngineErrorCode
  readonly details: Record<string, unknown> | undefined
  /** The code of an error of this class thrown without one. */
  static defaultCode: EngineErrorCode = 'INVALID_INPUT'

  constructor(message: string, options: EngineErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = options.code ?? (new.target as typeof EngineError).defaultCode
    this.details = options.details
  }
}

/**
 * Input that breaks a documented rule of a calculator (bad amount, bad decimal string, bad date, ...).
 * The API answers it with 400.
 *
 * @example
 * throw new InvalidInputError('balance must be a non-negative decimal', { details: { field: 'balance' } })
 */
export class InvalidInputError extends EngineError {
  override name = 'InvalidInputError'
}

/**
 * A date outside the reports that exist, or an inverted range (`from` after `to`). The API answers 400.
 *
 * @example
 * throw new ReportRangeError('from is after to', { code: 'LOT_RANGE_INVERTED', details: { from, to } })
 */
export class ReportRangeError extends InvalidInputError {
  override name = 'ReportRangeError'
}

/**
 * A fee schedule that does not sum to exactly 1, has unknown parts, or is missing for a report time.
 * This is an operator configuration problem, not a caller error.
 *
 * @example
 * throw new FeeScheduleError('shares sum to 0.99, not 1', { details: { id: 'v0-default' } })
 */
export class FeeScheduleError extends EngineError {
  override name = 'FeeScheduleError'
  static override defaultCode: EngineErrorCode = 'FEE_SCHEDULE_INVALID'
}

/**
 * Indexed redemption data that contradicts the contract's rules (a claim larger than the request,
 * a withdrawal stack with gaps, ...). Signals corrupt or incomplete ingestion.
 *
 * @example
 * throw new RedeemStateError('claim exceeds the request', { details: { id: 4 } })
 */
export class RedeemStateError extends EngineError {
  override name = 'RedeemStateError'
  static override defaultCode: EngineErrorCode = 'REDEEM_STATE_INVALID'
}
