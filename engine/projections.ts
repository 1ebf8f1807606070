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
