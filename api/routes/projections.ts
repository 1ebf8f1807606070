import type { FastifyInstance, FastifyReply } from 'fastify'
import { Type } from 'typebox'
import type { Repos, StoredConsensusSnapshot } from '../../db/repos/index.ts'
import {
  computeExitQueue,
  type ExitQueueInfo,
  explainProjection,
  formatUnits18,
  type ProjectionContext,
  projectRedeemManager,
  projectRedeemRequest,
  type WithdrawalEventInput,
} from '../../engine/index.ts'
import { ApiError } from '../errors.ts'
import { errorResponses, StringEnum } from '../schemas.ts'
import { eventInput } from './redeems/reads.ts'

/**
 * Redemption projections (estimates) and the validator exit queue. Inputs: indexed RedeemManager events and
 * oracle reports (database), and the consensus layer's exit queue: the latest snapshot the consensus job
 * stored (jobs/consensus.ts, from the Beacon API at BEACON_URL or the devnet's simulated facts); a request
 * never reaches the consensus node. The estimate is the engine's (engine/README.md §9):
 * - a position already covered by the withdrawal stack: the block time of the report whose withdrawal
 *   event covers it (in the past);
 * - else, with shortfall = position - stack total (in ETH at the latest rate): the next report when the
 *   expected skims of a day cover it, otherwise the first report after now + exit wait + withdrawability
 *   delay + half a sweep. "now" is the chain's (the head the follower last saw).
 * The basis of each estimate is in the `X-Projection-Basis` header and, with the inputs it was decided from, in
 * the answer's `explanation` (`explainProjection`): `case` (= the basis), `inputs` (exact decimal amounts; the
 * exit queue in hours, only for `exit_queue`) and `next_calculation_at`, the next scheduled report after now.
 */

const Idx = Type.Object({ idx: Type.Integer({ minimum: 0, maximum: 4_294_967_295 }) })
const ExitQueue = Type.Object({
  exit_time_hours: Type.String(),
  mandatory_exit_delay_hours: Type.String(),
  sweep_time_hours: Type.String(),
})

/** An exact decimal amount (formatUnits18). */
const Amount = Type.String()
/** Why a projection is what it is (docs/decisions.md "Redemption reads"); the same object for v1 and v0. */
const Explanation = Type.Object({
  case: StringEnum(['satisfied', 'buffer', 'exit_queue', 'no_demand'] as const, {
    description: 'the case the engine decided; equals the X-Projection-Basis header',
  }),
  inputs: Type.Object({
    queue_position_lseth: Amount,
    withdrawal_stack_lseth: Amount,
    shortfall_lseth: Amount,
    shortfall_eth: Amount,
    redeem_buffer_eth: Amount,
    expected_daily_skims_eth: Amount,
    exit_queue: Type.Union([ExitQueue, Type.Null()]),
  }),
  next_calculation_at: Type.String({ format: 'date-time' }),
})

const seconds = (d: Date) => Math.floor(d.getTime() / 1000)

/** The exit queue as `/eth/v1/validators/queue` shows it (hours, 2 decimals rounded up). */
function exitQueueHours(info: ExitQueueInfo) {
  return {
    exit_time_hours: info.exit_time_hours,
    mandatory_exit_delay_hours: info.mandatory_exit_delay_hours,
    sweep_time_hours: info.sweep_time_hours,
  }
}

/**
 * The `explanation` of a projection answer: the engine's `explainProjection` of the same position and context,
 * amounts as exact decimal strings, the exit queue as read from the consensus layer (only for `exit_queue`).
 */
function explanationOf(
  end: bigint,
  events: readonly WithdrawalEventInput[],
  projection: { ctx: ProjectionContext; exitQueue: ExitQueueInfo | null },
) {
  const explained = explainProjection(end, events, projection.ctx)
  const { inputs } = explained
  return {
    case: explained.case,
    inputs: {
      queue_position_lseth: formatUnits18(inputs.queue_position_lseth),
      withdrawal_stack_lseth: formatUnits18(inputs.withdrawal_stack_lseth),
      shortfall_lseth: formatUnits18(inputs.shortfall_lseth),
      shortfall_eth: formatUnits18(inputs.shortfall_eth),
      redeem_buffer_eth: formatUnits18(inputs.redeem_buffer_eth),
      expected_daily_skims_eth: formatUnits18(inputs.expected_daily_skims_eth),
      exit_queue:
        inputs.exit_queue !== null && projection.exitQueue !== null
          ? exitQueueHours(projection.exitQueue)
          : null,
    },
    next_calculation_at: explained.next_calculation_at_iso,
  }
}

/** The exit queue estimate from a stored consensus snapshot. */
export function exitQueueOf(snapshot: StoredConsensusSnapshot): ExitQueueInfo {
  return computeExitQueue({
    epoch: snapshot.epoch,
    active_validators: snapshot.active_validators,
    total_active_balance_gwei: snapshot.total_active_balance_gwei,
    queued_exit_balance_gwei: snapshot.queued_exit_balance_gwei,
    sweep_eligible_validators: snapshot.sweep_eligible_validators,
  })
}

/** Projections of redeem requests and of the redeem queue, and the validator exit queue. */
export function projectionRoutes(app: FastifyInstance, deps: { repos: Repos }) {
  const { repos } = deps
  const redeems = { onRequest: app.requireScope('read:eth-redeems') }
  const tags = ['redemptions']

  /** The exit queue of the latest stored consensus snapshot; none stored yet (the job has not run): 503 IR5031. */
  async function exitQueue(): Promise<ExitQueueInfo> {
    const snapshot = await repos.consensus.latest()
    if (!snapshot) throw new ApiError('IR5031', 'consensus-layer data is unavailable: retry later')
    return exitQueueOf(snapshot)
  }

  /**
   * The projection context and the exit queue it holds; the exit queue is read only when the position is not
   * covered yet (else null, and zero waits in the context).
   */
  async function context(
    end: bigint,
    events: WithdrawalEventInput[],
  ): Promise<{ ctx: ProjectionContext; exitQueue: ExitQueueInfo | null }> {
    const state = await repos.reports.projectionState()
    const [latest, previous] = state.reports
    if (!latest)
      throw new ApiError('IR4000', 'no oracle report has been ingested yet: nothing to project from')
    const last = events[events.length - 1]
    const covered = last !== undefined && last.height + last.amount >= end
    // a report before River 1.0.0 says nothing of skims (there were no withdrawals): none counted
    const skimmedOf = (r: typeof latest) => BigInt(r.validators_skimmed_balance ?? 0)
    const skimmed =
      latest.validators_skimmed_balance === null || !previous || previous.validators_skimmed_balance === null
        ? 0n
        : skimmedOf(latest) - skimmedOf(previous)
    const queue = covered || end <= 0n ? null : await exitQueue()
    const ctx: ProjectionContext = {
      now: seconds(state.now),
      last_report_at: seconds(latest.block_time),
      underlying: BigInt(latest.total_underlying_supply),
      supply: BigInt(latest.total_supply),
      // after a report the redeem buffer has been paid into the withdrawal event (or returned to deposits)
      redeem_buffer_eth: 0n,
      // what a day brings without exits: the latest report's skimmed increase and execution-layer fees
      expected_daily_skims_eth: (skimmed > 0n ? skimmed : 0n) + BigInt(latest.trace_pulled_el_fees),
      exit_queue: queue ?? { exit_seconds: 0, mandatory_exit_delay_seconds: 0, sweep_seconds: 0 },
    }
    return { ctx, exitQueue: queue }
  }

  async function requestProjection(idx: number, reply: FastifyReply) {
    const [[request], events] = await Promise.all([
      repos.redemptions.requests({ ids: [idx] }),
      repos.redemptions.withdrawalEvents(),
    ])
    if (!request) throw new ApiError('IR3400', `redeem request ${idx} not found`)
    const inputs = events.map(eventInput)
    const position = { height: BigInt(request.height), amount: BigInt(request.amount) }
    const end = position.height + position.amount
    const projected = await context(end, inputs)
    const projection = projectRedeemRequest(position, inputs, projected.ctx)
    reply.header('x-projection-basis', projection.basis)
    return {
      projected_redeemable_at: projection.projected_redeemable_at,
      explanation: explanationOf(end, inputs, projected),
    }
  }

  async function managerProjection(reply: FastifyReply) {
    const [last, events] = await Promise.all([
      repos.redemptions.lastRequest(),
      repos.redemptions.withdrawalEvents(),
    ])
    const inputs = events.map(eventInput)
    const end = last ? BigInt(last.height) + BigInt(last.amount) : 0n
    const projected = await context(end, inputs)
    const projection = projectRedeemManager({ total_amount_redeem_queue_lseth: end }, inputs, projected.ctx)
    reply.header('x-projection-basis', projection.basis)
    return {
      projected_fulfilled_at: projection.projected_fulfilled_at,
      explanation: explanationOf(end, inputs, projected),
    }
  }

  for (const version of ['v1', 'v0'] as const) {
    app.get(
      `/eth/${version}/redeems/:idx/projection`,
      {
        ...redeems,
        schema: {
          tags,
          summary: 'When a redeem request is projected to be redeemable (an estimate)',
          description:
            'Covered by the withdrawal stack: the report that covered it (past). Otherwise the next report when a ' +
            "day's skims cover the shortfall, else the first report after the validator exit wait. Basis in X-Projection-Basis; " +
            'the case, its inputs and the next report after now (next_calculation_at) in explanation.',
          params: Idx,
          response: {
            200: Type.Object({
              projected_redeemable_at: Type.String({ format: 'date-time' }),
              explanation: Explanation,
            }),
            ...errorResponses(400, 401, 403, 404, 503),
          },
        },
      },
      async (request, reply) => requestProjection((request.params as { idx: number }).idx, reply),
    )
    app.get(
      `/eth/${version}/redeems_info/projection`,
      {
        ...redeems,
        schema: {
          tags,
          summary: 'When the whole redeem queue is projected to be fulfilled (an estimate)',
          description:
            'In the past when supply already covers demand (then: the report that covered the latest request). ' +
            'The case, its inputs (the queue end as position) and the next report after now in explanation.',
          response: {
            200: Type.Object({
              projected_fulfilled_at: Type.String({ format: 'date-time' }),
              explanation: Explanation,
            }),
            ...errorResponses(401, 403, 404, 503),
          },
        },
      },
      async (_request, reply) => managerProjection(reply),
    )
  }

  app.get(
    '/eth/v1/validators/queue',
    {
      schema: {
        tags,
        summary: 'Validator exit queue: exit wait, mandatory withdrawability delay, half a sweep (hours)',
        description:
          'exit_time_hours = (ceil(queued exit balance / churn per epoch) + 5) epochs; mandatory_exit_delay_hours = ' +
          '256 epochs; sweep_time_hours = (sweep-eligible validators / 16) slots / 2. 2 decimals, rounded up.',
        response: { 200: ExitQueue, ...errorResponses(503) },
      },
    },
    async () => {
      return exitQueueHours(await exitQueue())
    },
  )
}
