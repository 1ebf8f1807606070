import { LsReportError } from '../../common/errors.ts'

/**
 * A day cannot be computed from the stored data (e.g. a balance would go negative, a report's supply is
 * inconsistent): the day fails for good with this error, nothing of it is written, and later days wait.
 * The message names the report epoch and block.
 */
export class DayDataError extends LsReportError {
  override name = 'DayDataError'
}

/** A day cannot run yet (its predecessor is not computed, its report moved): retried later. */
export class DayNotReadyError extends LsReportError {
  override name = 'DayNotReadyError'
}
