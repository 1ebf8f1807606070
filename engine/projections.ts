import { isoTimestampOf, SECONDS_PER_DAY } from './dates.ts'
import { InvalidInputError, RedeemStateError } from './errors.ts'
import type { ExitQueueInfo } from './exit-queue.ts'
import { underlyingFromShares } from './rates.ts'
import type { RedeemManagerInfo, WithdrawalEventInput } from './redemptions.ts'
import { findWithdrawalEvent, validateWithdrawalStack } from './redemptions.ts'

/**
 * Projections (estimates) of when a redeem request becomes redeemable and when the redeem queue is
 * fulfilled. A position already covered by the withdrawal stack is dated by the report whose withdrawal
 * event covers it. Otherwise the shortfall (position - stack total, in ETH at rate_k) is covered either at
 * the next report (when the redeem buffer plus the expected daily skims cover it) or at the first report
 * after now + exit wait + withdrawability delay + half a sweep (validators must exit first).
 * `explainProjection` says which of these cases was decided, from which inputs, and when the estimate is next
 * recomputed.
 */

/** What projections need to know, all as parameters (no clock). */
export interface ProjectionContext {
  /** The current time, unix seconds. */
  now: number
  /** Block time of the latest oracle report. */
  last_report_at: number
  /** Seconds between reports (default one day). */
  report_interval_seconds?: number
  /** U and S after the latest report (rate_k). */
  underlying: bigint
  supply: bigint
  /** ETH available to the next report's withdrawal event without exits (redeem buffer), wei. */
  redeem_buffer_eth: bigint
  /** Skimmed rewards and EL fees expected by the next report, wei. */
  expected_daily_skims_eth: bigint
  /** Exit queue durations (from `computeExitQueue`). */
  exit_queue: Pick<ExitQueueInfo, 'exit_seconds' | 'mandatory_exit_delay_seconds' | 'sweep_seconds'>
}

/** How a projection was reached. */
export type ProjectionBasis = 'satisfied' | 'buffer' | 'exit_queue' | 'no_demand'

/** A projected instant for an LsETH position of the redeem queue. */
export interface Projection {
  /** Unix seconds. */
  projected_at: number
  /** RFC 3339. */
  projected_at_iso: string
  basis: ProjectionBasis
  /** LsETH of the position not covered by the stack yet (0 when satisfied). */
  shortfall_lseth: bigint
  /** The shortfall in ETH at rate_k, floor. */
  shortfall_eth: bigint
}

/**
 * The first scheduled report strictly after `instant`: last_report_at + n x interval, n >= 1.
 *
 * @example
 * nextReportAfter(1000, 100, 86400) // 86500
 */
export function nextReportAfter(instant: number, lastReportAt: number, interval = SECONDS_PER_DAY): number {
  if (!(interval > 0))
    throw new InvalidInputError('report interval must be positive', { details: { interval } })
  // rounding: floor of the number of whole intervals elapsed, then the next one
  const n = instant < lastReportAt ? 1 : Math.floor((instant - lastReportAt) / interval) + 1
  return lastReportAt + n * interval
}

function projection(
  at: number,
  basis: ProjectionBasis,
  shortfallLseth: bigint,
  shortfallEth: bigint,
): Projection {
  return {
    projected_at: at,
    projected_at_iso: isoTimestampOf(at),
    basis,
    shortfall_lseth: shortfallLseth,
    shortfall_eth: shortfallEth,
  }
}

/**
 * When the queue position `end` (exclusive end of a request, cumulative LsETH) is covered by the withdrawal
 * stack: the covering event's report time if it already is, else the estimate described above.
 *
 * @example
 * projectPosition(15n, events, ctx).basis // 'exit_queue'
 */
export function projectPosition(
  end: bigint,
  events: readonly WithdrawalEventInput[],
  ctx: ProjectionContext,
): Projection {
  validateWithdrawalStack(events)
  const last = events[events.length - 1]
  const stackTotal = last === undefined ? 0n : last.height + last.amount
  if (end <= 0n) return projection(ctx.last_report_at, 'no_demand', 0n, 0n)
  if (stackTotal >= end) {
    const event = events[findWithdrawalEvent(events, end - 1n)]
    if (event?.reported_at === undefined) {
      throw new RedeemStateError('the covering withdrawal event has no report time', {
        details: { position: String(end), event: event?.id },
      })
    }
    return projection(event.reported_at, 'satisfied', 0n, 0n)
  }
  const shortfallLseth = end - stackTotal
  // rounding: floor (underlyingBalanceFromShares)
  const shortfallEth = underlyingFromShares(shortfallLseth, ctx.underlying, ctx.supply)
  const interval = ctx.report_interval_seconds ?? SECONDS_PER_DAY
  if (ctx.redeem_buffer_eth + ctx.expected_daily_skims_eth >= shortfallEth) {
    return projection(
      nextReportAfter(ctx.now, ctx.last_report_at, interval),
      'buffer',
      shortfallLseth,
      shortfallEth,
    )
  }
  const wait =
    ctx.exit_queue.exit_seconds + ctx.exit_queue.mandatory_exit_delay_seconds + ctx.exit_queue.sweep_seconds
  return projection(
    nextReportAfter(ctx.now + wait, ctx.last_report_at, interval),
    'exit_queue',
    shortfallLseth,
    shortfallEth,
  )
}

/**
 * `projected_redeemable_at` of a request (its height and amount at creation): the projection of its end.
 *
 * @example
 * projectRedeemRequest({ height: 10n, amount: 5n }, events, ctx).projected_redeemable_at // '2026-05-03T12:00:00Z'
 */
export function projectRedeemRequest(
  request: { height: bigint; amount: bigint },
  events: readonly WithdrawalEventInput[],
  ctx: ProjectionContext,
): Projection & { projected_redeemable_at: string } {
  const result = projectPosition(request.height + request.amount, events, ctx)
  return { ...result, projected_redeemable_at: result.projected_at_iso }
}

/**
 * `projected_fulfilled_at` of the redeem manager: the projection of the end of the queue. In the past when
 * supply already covers demand (then it is the report that covered the latest request).
 *
 * @example
 * projectRedeemManager(computeRedeemManagerInfo(requests, events), events, ctx).projected_fulfilled_at
 */
export function projectRedeemManager(
  info: Pick<RedeemManagerInfo, 'total_amount_redeem_queue_lseth'>,
  events: readonly WithdrawalEventInput[],
  ctx: ProjectionContext,
): Projection & { projected_fulfilled_at: string } {
  const result = projectPosition(info.total_amount_redeem_queue_lseth, events, ctx)
  return { ...result, projected_fulfilled_at: result.projected_at_iso }
}

/** The exit queue durations an `exit_queue` projection waited for (seconds). */
export type ProjectionExitWait = ProjectionContext['exit_queue']

/**
 * Why a projection is what it is: the case `projectPosition` decided and the inputs it decided from.
 * Amounts are wei (LsETH share units for `_lseth`).
 */
export interface ProjectionExplanation {
  /** The case decided: the projection's `basis` (and the API's X-Projection-Basis header). */
  case: ProjectionBasis
  inputs: {
    /** The position projected: a request's height + amount, or the end of the redeem queue. */
    queue_position_lseth: bigint
    /** Total LsETH of the withdrawal stack (height + amount of its last event; 0 when empty). */
    withdrawal_stack_lseth: bigint
    /** queue_position - stack total when positive, else 0. */
    shortfall_lseth: bigint
    /** The shortfall in ETH at rate_k, floor. */
    shortfall_eth: bigint
    redeem_buffer_eth: bigint
    expected_daily_skims_eth: bigint
    /** The exit wait taken: only for `exit_queue` (null when the case did not need validators to exit). */
    exit_queue: ProjectionExitWait | null
  }
  /**
   * When the estimate is next recomputed from new inputs: the first scheduled report strictly after now
   * (`nextReportAfter(now, last_report_at, interval)`), unix seconds. A `satisfied` answer is final; an
   * `exit_queue` one may also move as the consensus layer's exit queue changes.
   */
  next_calculation_at: number
  /** next_calculation_at in RFC 3339. */
  next_calculation_at_iso: string
}

/**
 * The explanation of `projectPosition(end, events, ctx)`: its case (computed by `projectPosition` itself, so
 * it is the engine's decision), the inputs the case was decided from and the next report after now.
 *
 * @example
 * explainProjection(110n * E, events, ctx)
 * // { case: 'exit_queue', inputs: { queue_position_lseth: 110n * E, withdrawal_stack_lseth: 10n * E,
 * //   shortfall_lseth: 100n * E, ..., exit_queue: { exit_seconds: 1920, ... } },
 * //   next_calculation_at_iso: '2026-05-02T12:00:00Z' }
 */
export function explainProjection(
  end: bigint,
  events: readonly WithdrawalEventInput[],
  ctx: ProjectionContext,
): ProjectionExplanation {
  const decided = projectPosition(end, events, ctx)
  const last = events[events.length - 1]
  const next = nextReportAfter(ctx.now, ctx.last_report_at, ctx.report_interval_seconds ?? SECONDS_PER_DAY)
  return {
    case: decided.basis,
    inputs: {
      queue_position_lseth: end,
      withdrawal_stack_lseth: last === undefined ? 0n : last.height + last.amount,
      shortfall_lseth: decided.shortfall_lseth,
      shortfall_eth: decided.shortfall_eth,
      redeem_buffer_eth: ctx.redeem_buffer_eth,
      expected_daily_skims_eth: ctx.expected_daily_skims_eth,
      exit_queue:
        decided.basis === 'exit_queue'
          ? {
              exit_seconds: ctx.exit_queue.exit_seconds,
              mandatory_exit_delay_seconds: ctx.exit_queue.mandatory_exit_delay_seconds,
              sweep_seconds: ctx.exit_queue.sweep_seconds,
            }
          : null,
    },
    next_calculation_at: next,
    next_calculation_at_iso: isoTimestampOf(next),
  }
}
