import { addDaysToDate, isoTimestampOf, SECONDS_PER_DAY, utcDateOf } from './dates.ts'
import { InvalidInputError } from './errors.ts'
import { totalStoppedValidators } from './operator-fees.ts'
import { conversionRate, feeBpsToBigint, feeRateOfBps } from './rates.ts'
import { formatRatio } from './units.ts'

/**
 * The protocol record of an oracle report and `a_srr_7d`, the 7-day trailing average of the annualized
 * staking reward rate.
 */

/** A report's post-fee totals at its block time. */
export interface RateObservation {
  /** Block time, unix seconds. */
  timestamp: number
  /** U after the report (wei). */
  underlying: bigint
  /** S after the report (shares). */
  supply: bigint
}

/** Days in a year for annualizing. */
export const DAYS_PER_YEAR = 365
/** Length of the a_srr window in calendar days (the report's own date and the 6 before). */
export const A_SRR_WINDOW_DAYS = 7

/**
 * a_srr_7d for the last report of `history` (ascending by timestamp; include at least the 7 previous
 * reports so every report of the window has its predecessor). For each report j of the window, the UTC
 * dates date_k - 6 .. date_k, that has a predecessor j-1 in `history`:
 * apr_j = (rate_j / rate_{j-1} - 1) x (365 days / (t_j - t_{j-1})) x 100.
 * The result is the arithmetic mean of the apr_j (exact rational arithmetic, then 18 dp ROUND_DOWN) as a
 * percent string.
 *
 * Null ("not known yet", never '0') until the window is full: when fewer than A_SRR_WINDOW_DAYS (7) distinct
 * UTC dates of the window have an apr_j. So a chain's first 7 reports (one a day) have none: the first has no
 * predecessor, the 7th has 6 steps; the 8th is the mean of 7. A date without a report inside the window
 * (a missed oracle report) also leaves it null until that date leaves the window, even though the next
 * report's step spans the gap: the average is of seven report dates, never of fewer. Two reports on one date
 * count as one date and both steps enter the mean.
 *
 * @example
 * computeASrr7d(eightDailyReportsGrowing0_01PercentADay) // '3.65' (0.01 % a day, annualized)
 * computeASrr7d(eightDailyReportsGrowing0_01PercentADay.slice(0, 7)) // null (6 dates with a step)
 */
export function computeASrr7d(history: readonly RateObservation[]): string | null {
  const last = history[history.length - 1]
  if (last === undefined) return null
  for (let i = 1; i < history.length; i++) {
    if ((history[i] as RateObservation).timestamp <= (history[i - 1] as RateObservation).timestamp) {
      throw new InvalidInputError('history must be sorted by strictly increasing timestamp', {
        details: { index: i },
      })
    }
  }
  const windowStart = addDaysToDate(utcDateOf(last.timestamp), -(A_SRR_WINDOW_DAYS - 1))
  // exact sum of fractions num/den
  let sumNum = 0n
  let sumDen = 1n
  let count = 0n
  const dates = new Set<string>()
  for (let j = history.length - 1; j >= 1; j--) {
    const current = history[j] as RateObservation
    const date = utcDateOf(current.timestamp)
    if (date < windowStart) break
    const previous = history[j - 1] as RateObservation
    if (previous.underlying <= 0n || previous.supply <= 0n || current.supply <= 0n) {
      throw new InvalidInputError('rates of the history must be positive', {
        details: { timestamp: current.timestamp },
      })
    }
    const elapsed = BigInt(current.timestamp - previous.timestamp)
    // apr_j = (U_j S_{j-1} - S_j U_{j-1}) / (S_j U_{j-1}) x 365 x 86400 / elapsed x 100
    const num =
      (current.underlying * previous.supply - current.supply * previous.underlying) *
      BigInt(DAYS_PER_YEAR * SECONDS_PER_DAY) *
      100n
    const den = current.supply * previous.underlying * elapsed
    sumNum = sumNum * den + num * sumDen
    sumDen *= den
    count += 1n
    dates.add(date)
  }
  if (dates.size < A_SRR_WINDOW_DAYS) return null
  // rounding: ROUND_DOWN (toward zero) at 18 decimals, once, on the exact mean
  return formatRatio(sumNum, sumDen * count, 18)
}

/** Inputs of the protocol record of report k. */
export interface ProtocolRecordInput {
  oracle_report: string
  /** Block time of the report, unix seconds. */
  timestamp: number
  /** trace.rewards (wei). */
  rewards: bigint
  global_fee_bps: number | bigint
  /** Fee shares minted to the collector at the report (RewardsEarned; 0 if none). */
  fee_shares_minted: bigint
  /** U_k and S_k after the report. */
  underlying: bigint
  supply: bigint
  /** LsETH minted (from 0x0) and burned (to 0x0) since the previous report, fee mint included in mints. */
  mints_lseth: bigint
  burns_lseth: bigint
  /** report.validatorsCount. */
  validators_count: number
  /** report.stoppedValidatorCountPerOperator ([total, operator 0, ...]). */
  stopped_validator_count_per_operator: readonly number[]
  /** Earlier reports, ascending (at least the 7 before this one for a full a_srr_7d window). */
  previous_reports: readonly RateObservation[]
}

/** The interface's Protocol record (amounts bigint, rates strings). */
export interface ProtocolRecord {
  oracle_report: string
  /** The report's block time (RFC 3339). */
  date: string
  total_protocol_mints_lseth: bigint
  total_protocol_burns_lseth: bigint
  total_protocol_active_keys_count: number
  rewards_eth: bigint
  gross_fee_rate: string
  gross_fee_lseth: bigint
  conversion_rate: string
  total_lseth_supply: bigint
  /** Percent string; null until 7 dates of the window have a step (`computeASrr7d`). */
  a_srr_7d: string | null
}

/**
 * The protocol record of a report: rewards, fee rate and fee shares minted, rate_k, supply, the period's
 * mints and burns, active keys = validatorsCount - stopped (element 0 of stoppedValidatorCountPerOperator)
 * and a_srr_7d over `previous_reports` + this report.
 *
 * @example
 * computeProtocolRecord({ ...report, previous_reports: lastWeek }).a_srr_7d // e.g. '3.1415'
 */
export function computeProtocolRecord(input: ProtocolRecordInput): ProtocolRecord {
  for (const [field, value] of [
    ['rewards', input.rewards],
    ['fee_shares_minted', input.fee_shares_minted],
    ['mints_lseth', input.mints_lseth],
    ['burns_lseth', input.burns_lseth],
  ] as const) {
    if (value < 0n) throw new InvalidInputError(`${field} must not be negative`, { details: { field } })
  }
  const stopped = totalStoppedValidators(input.stopped_validator_count_per_operator)
  const activeKeys = input.validators_count - stopped
  if (!Number.isSafeInteger(activeKeys) || activeKeys < 0) {
    throw new InvalidInputError('validators_count must be at least the stopped validators', {
      details: { validators_count: input.validators_count, stopped },
    })
  }
  const current = { timestamp: input.timestamp, underlying: input.underlying, supply: input.supply }
  return {
    oracle_report: input.oracle_report,
    date: isoTimestampOf(input.timestamp),
    total_protocol_mints_lseth: input.mints_lseth,
    total_protocol_burns_lseth: input.burns_lseth,
    total_protocol_active_keys_count: activeKeys,
    rewards_eth: input.rewards,
    gross_fee_rate: feeRateOfBps(feeBpsToBigint(input.global_fee_bps)),
    gross_fee_lseth: input.fee_shares_minted,
    conversion_rate: conversionRate(input.underlying, input.supply),
    total_lseth_supply: input.supply,
    a_srr_7d: computeASrr7d([...input.previous_reports, current]),
  }
}
