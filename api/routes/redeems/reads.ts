import type { Repos } from '../../../db/repos/index.ts'
import type { RedeemAsOf, WithdrawalEventRow } from '../../../db/repos/redemptions.ts'
import {
  computeRedeemManagerInfo,
  computeRedeemRequestStates,
  formatUnits18,
  type RedeemRequestState,
  type WithdrawalEventInput,
} from '../../../engine/index.ts'
import { ApiError } from '../../errors.ts'
import { parseDate } from '../../reporting/dates.ts'
import type { AsOfParams } from './schemas.ts'

/** Longest as_of_block accepted (uint64 fits in 20 digits). */
const AS_OF_BLOCK = /^\d{1,20}$/

/** An indexed ReportedWithdrawal as the engine takes it (the redeem reads and the projections). */
export function eventInput(e: WithdrawalEventRow): WithdrawalEventInput {
  return {
    id: Number(e.withdrawal_event_id),
    height: BigInt(e.height),
    amount: BigInt(e.amount),
    eth_amount: BigInt(e.eth_amount),
    reported_at: Math.floor(e.block_time.getTime() / 1000),
  }
}

/** What the redeem routes read: request states and queue totals, as of a point in chain history. */
export interface RedeemReads {
  /**
   * The point in history a read asks for (undefined: everything indexed). 400 IR1000 when both parameters
   * are given, a value is malformed, nothing is indexed yet, or it lies past the indexed head.
   */
  asOfOf(q: AsOfParams): Promise<RedeemAsOf | undefined>
  /** The states of the requests of these owners and/or ids, as of a point (the engine's computation). */
  states(filter: { owners?: string[]; ids?: number[] }, asOf?: RedeemAsOf): Promise<RedeemRequestState[]>
  /** One request's state as of the query's point; 404 IR3400 naming the point when it did not exist. */
  one(idx: number, q: AsOfParams): Promise<RedeemRequestState>
  /** The handler of GET redeems_info: queue and withdrawal stack totals as of the query's point. */
  info(request: { query: unknown }): Promise<{
    total_amount_redeem_queue_lseth: string
    total_amount_withdrawal_stack_lseth: string
  }>
}

/** How a 404 names the point in history it was asked at. */
function at(asOf: RedeemAsOf | undefined, q: AsOfParams): string {
  if (asOf === undefined) return ''
  return q.as_of_block !== undefined ? ` at as_of_block ${q.as_of_block}` : ` at as_of_date ${q.as_of_date}`
}

/**
 * The redeem reads over the repositories: every figure is computed by the engine from indexed events.
 *
 * @example
 * const reads = redeemReads(repos)
 * await reads.one(12, { as_of_block: '21000000' })
 */
export function redeemReads(repos: Repos): RedeemReads {
  const { redemptions } = repos

  async function asOfOf(q: AsOfParams): Promise<RedeemAsOf | undefined> {
    if (q.as_of_block === undefined && q.as_of_date === undefined) return undefined
    if (q.as_of_block !== undefined && q.as_of_date !== undefined) {
      throw new ApiError('IR1000', 'give as_of_block or as_of_date, not both')
    }
    if (q.as_of_block !== undefined && !AS_OF_BLOCK.test(q.as_of_block)) {
      throw new ApiError(
        'IR1000',
        `as_of_block must be a block number in decimal digits (got ${JSON.stringify(q.as_of_block)})`,
      )
    }
    const date = q.as_of_date === undefined ? undefined : parseDate(q.as_of_date, 'as_of_date')
    const head = await redemptions.indexedHead()
    if (!head)
      throw new ApiError(
        'IR1000',
        'no RedeemManager events are indexed yet: as_of reads need the follower to have synced',
      )
    const headDate = head.time.toISOString().slice(0, 10)
    if (date !== undefined) {
      if (date > headDate) {
        throw new ApiError(
          'IR1000',
          `as_of_date ${date} is after the indexed head's date ${headDate} (block ${head.block_number})`,
        )
      }
      return { time: new Date(`${date}T23:59:59Z`) }
    }
    const block = BigInt(q.as_of_block as string)
    if (block > head.block_number) {
      throw new ApiError(
        'IR1000',
        `as_of_block ${block} is above the indexed head ${head.block_number} (${headDate}); retry once the follower has ingested it`,
      )
    }
    return { block }
  }

  async function states(
    filter: { owners?: string[]; ids?: number[] },
    asOf?: RedeemAsOf,
  ): Promise<RedeemRequestState[]> {
    const [requests, events] = await Promise.all([
      redemptions.requests(asOf ? { ...filter, asOf } : filter),
      redemptions.withdrawalEvents(asOf),
    ])
    const claims = await redemptions.claims(
      requests.map((r) => Number(r.request_id)),
      asOf,
    )
    return computeRedeemRequestStates(
      requests.map((r) => ({
        id: Number(r.request_id),
        owner: r.recipient,
        height: BigInt(r.height),
        amount: BigInt(r.amount),
        max_redeemable_eth: BigInt(r.max_redeemable_eth),
        requested_at: Math.floor(r.block_time.getTime() / 1000),
      })),
      events.map(eventInput),
      claims.map((c) => ({
        redeem_request_id: Number(c.request_id),
        lseth_amount: BigInt(c.lseth_amount),
        eth_amount: BigInt(c.eth_amount),
        remaining_lseth_amount: BigInt(c.remaining_lseth_amount),
      })),
    )
  }

  async function one(idx: number, q: AsOfParams): Promise<RedeemRequestState> {
    const asOf = await asOfOf(q)
    const [state] = await states({ ids: [idx] }, asOf)
    if (!state) throw new ApiError('IR3400', `redeem request ${idx} not found${at(asOf, q)}`)
    return state
  }

  async function info(request: { query: unknown }) {
    const asOf = await asOfOf(request.query as AsOfParams)
    const [last, events] = await Promise.all([
      redemptions.lastRequest(asOf),
      redemptions.withdrawalEvents(asOf),
    ])
    const totals = computeRedeemManagerInfo(
      last ? [{ id: Number(last.request_id), height: BigInt(last.height), amount: BigInt(last.amount) }] : [],
      events.map(eventInput),
    )
    return {
      total_amount_redeem_queue_lseth: formatUnits18(totals.total_amount_redeem_queue_lseth),
      total_amount_withdrawal_stack_lseth: formatUnits18(totals.total_amount_withdrawal_stack_lseth),
    }
  }

  return { asOfOf, states, one, info }
}
