import { isoTimestampOf } from './dates.ts'
import { RedeemStateError } from './errors.ts'
import { formatUnits18, minBigint } from './units.ts'

/**
 * Redemption state from indexed RedeemManager events, mirroring the contract (PROTOCOL.md):
 * requests stack by height, withdrawal events stack by height, a request matches the event with
 * we.height <= req.height < we.height + we.amount, claims raise req.height and lower req.amount, and a claim
 * pays floor(matched x we.ethAmount / we.amount) capped at floor(matched x req.maxRedeemableEth / req.amount)
 * per event crossed (maxRedeemableEth decreasing by what was paid).
 */

/** resolveRedeemRequests: the request is not satisfied yet. */
export const RESOLVE_UNSATISFIED = -1
/** resolveRedeemRequests: the request id does not exist. */
export const RESOLVE_OUT_OF_BOUNDS = -2
/** resolveRedeemRequests: the request is fully claimed. */
export const RESOLVE_FULLY_CLAIMED = -3

/** A redeem request as created (RequestedRedeem). */
export interface RedeemRequestInput {
  id: number
  /** The recipient (owner) of the request. */
  owner: string
  /** Height at creation: the LsETH of all requests before it. */
  height: bigint
  /** LsETH amount at creation. */
  amount: bigint
  /** maxRedeemableEth at creation (the request's value at the rate of the request). */
  max_redeemable_eth: bigint
  /** Block time of the request, unix seconds. */
  requested_at: number
}

/** A withdrawal event (ReportedWithdrawal). */
export interface WithdrawalEventInput {
  id: number
  height: bigint
  /** LsETH amount of the event. */
  amount: bigint
  /** ETH sent with the event. */
  eth_amount: bigint
  /** Block time of the report that created it, unix seconds (needed by projections only). */
  reported_at?: number
}

/** A claim (ClaimedRedeemRequest), in chain order per request. */
export interface RedeemClaimInput {
  redeem_request_id: number
  /** LsETH claimed by this call. */
  lseth_amount: bigint
  /** ETH paid by this call. */
  eth_amount: bigint
  /** The request's remaining LsETH after the call (checked when given). */
  remaining_lseth_amount?: bigint
}

/** Claim status of a request. */
export type StatusClaim = 'NOT_CLAIMED' | 'PARTIALLY_CLAIMED' | 'FULLY_CLAIMED'
/** Satisfaction status of a request. */
export type StatusSatisfaction = 'PENDING_SATISFACTION' | 'PARTIALLY_SATISFIED' | 'FULLY_SATISFIED'

/** A request's current on-chain state (what `getRedeemRequestDetails` returns after claims). */
export interface RedeemRequestCurrent {
  height: bigint
  amount: bigint
  max_redeemable_eth: bigint
}

/** The read model of a redeem request (interface fields, plus its current on-chain state). */
export interface RedeemRequestState {
  id: number
  owner: string
  /** Height at creation (cumulative LsETH of the requests before it). */
  height: bigint
  total_amount_lseth: bigint
  claimed_amount_lseth: bigint
  claimable_amount_lseth: bigint
  claimed_amount_eth: bigint
  claimable_amount_eth: bigint
  max_redeemable_amount_eth: bigint
  /** The event to claim with; -1 when none covers the current height; -3 when fully claimed. */
  withdrawal_event_id: number
  requested_at: number
  /** requested_at as RFC 3339. */
  timestamp: string
  status_claim: StatusClaim
  status_satisfaction: StatusSatisfaction
  /** Current on-chain height / amount / maxRedeemableEth. */
  current: RedeemRequestCurrent
}

/** One step of a claim: the part of the request matched by one withdrawal event. */
export interface ClaimStep {
  withdrawal_event_id: number
  lseth_amount: bigint
  eth_amount: bigint
  /** ETH above the cap, sent to the exceeding-ETH buffer. */
  exceeding_eth: bigint
}

/** What claiming a request now would pay. */
export interface ClaimSimulation {
  lseth_amount: bigint
  eth_amount: bigint
  steps: ClaimStep[]
  /** The request's state after the claim. */
  after: RedeemRequestCurrent
}

/** The redeem manager's totals. */
export interface RedeemManagerInfo {
  /** End of the redeem queue: height + amount of the last request (total LsETH ever requested). */
  total_amount_redeem_queue_lseth: bigint
  /** End of the withdrawal stack: height + amount of the last event (total LsETH ever supplied). */
  total_amount_withdrawal_stack_lseth: bigint
}

/**
 * Checks that withdrawal events form the contract's stack: ids 0..n-1 in order, heights contiguous from 0,
 * non-negative amounts. Throws `RedeemStateError` otherwise (missing or misordered logs).
 *
 * @example
 * validateWithdrawalStack([{ id: 0, height: 0n, amount: 5n, eth_amount: 5n }])
 */
export function validateWithdrawalStack(events: readonly WithdrawalEventInput[]): void {
  let height = 0n
  events.forEach((event, index) => {
    if (event.id !== index || event.height !== height || event.amount < 0n || event.eth_amount < 0n) {
      throw new RedeemStateError('withdrawal events must be ids 0..n-1 with contiguous heights', {
        details: { index, id: event.id, height: String(event.height), expected_height: String(height) },
      })
    }
    height += event.amount
  })
}

function stackEnd(events: readonly WithdrawalEventInput[]): bigint {
  const last = events[events.length - 1]
  return last === undefined ? 0n : last.height + last.amount
}

/**
 * Index of the withdrawal event covering `height` (we.height <= height < we.height + we.amount), or -1.
 * Binary search over the (validated) stack.
 *
 * @example
 * findWithdrawalEvent([{ id: 0, height: 0n, amount: 5n, eth_amount: 5n }], 4n) // 0
 */
export function findWithdrawalEvent(events: readonly WithdrawalEventInput[], height: bigint): number {
  let low = 0
  let high = events.length - 1
  while (low <= high) {
    const mid = (low + high) >> 1
    const event = events[mid] as WithdrawalEventInput
    if (height < event.height) high = mid - 1
    else if (height >= event.height + event.amount) low = mid + 1
    else return mid
  }
  return -1
}

/**
 * Simulates `claimRedeemRequests` for one request from its current state, starting at the event covering its
 * height and crossing later events while LsETH remains (unbounded depth). Per event:
 * matched = min(amount, we.height + we.amount - height); eth = floor(matched x we.eth / we.amount), capped at
 * floor(matched x maxRedeemableEth / amount); then height += matched, amount -= matched,
 * maxRedeemableEth -= eth.
 *
 * @example
 * simulateClaim({ height: 0n, amount: 10n, max_redeemable_eth: 10n }, [{ id: 0, height: 0n, amount: 4n, eth_amount: 5n }])
 * // { lseth_amount: 4n, eth_amount: 4n, steps: [{ withdrawal_event_id: 0, lseth_amount: 4n, eth_amount: 4n, exceeding_eth: 1n }], ... }
 */
export function simulateClaim(
  request: RedeemRequestCurrent,
  events: readonly WithdrawalEventInput[],
): ClaimSimulation {
  let { height, amount, max_redeemable_eth: maxEth } = request
  const steps: ClaimStep[] = []
  let lseth = 0n
  let eth = 0n
  let index = amount > 0n ? findWithdrawalEvent(events, height) : -1
  while (index !== -1 && index < events.length && amount > 0n) {
    const event = events[index] as WithdrawalEventInput
    if (event.amount > 0n) {
      const matched = minBigint(amount, event.height + event.amount - height)
      // rounding: floor (on-chain integer division) for the payout and for the cap
      const paid = (matched * event.eth_amount) / event.amount
      const cap = (matched * maxEth) / amount
      const capped = minBigint(paid, cap)
      steps.push({
        withdrawal_event_id: event.id,
        lseth_amount: matched,
        eth_amount: capped,
        exceeding_eth: paid - capped,
      })
      height += matched
      amount -= matched
      maxEth -= capped
      lseth += matched
      eth += capped
    }
    index += 1
  }
  return {
    lseth_amount: lseth,
    eth_amount: eth,
    steps,
    after: { height, amount, max_redeemable_eth: maxEth },
  }
}

/**
 * The current on-chain state of a request after its claims (in chain order): height + claimed LsETH,
 * amount - claimed LsETH, maxRedeemableEth - claimed ETH. Throws `RedeemStateError` when claims exceed the
 * request or contradict a claim's `remaining_lseth_amount`.
 *
 * @example
 * currentRedeemRequest(request, [{ redeem_request_id: 0, lseth_amount: 4n, eth_amount: 4n }]).amount
 */
export function currentRedeemRequest(
  request: RedeemRequestInput,
  claims: readonly RedeemClaimInput[],
): RedeemRequestCurrent {
  let height = request.height
  let amount = request.amount
  let maxEth = request.max_redeemable_eth
  for (const claim of claims) {
    if (claim.redeem_request_id !== request.id) {
      throw new RedeemStateError('claim of another request', {
        details: { id: request.id, claim: claim.redeem_request_id },
      })
    }
    if (
      claim.lseth_amount < 0n ||
      claim.eth_amount < 0n ||
      claim.lseth_amount > amount ||
      claim.eth_amount > maxEth
    ) {
      throw new RedeemStateError('claim exceeds what remains of the request', {
        details: { id: request.id, lseth_amount: String(claim.lseth_amount), remaining: String(amount) },
      })
    }
    height += claim.lseth_amount
    amount -= claim.lseth_amount
    maxEth -= claim.eth_amount
    if (claim.remaining_lseth_amount !== undefined && claim.remaining_lseth_amount !== amount) {
      throw new RedeemStateError('claim remaining amount disagrees with the request history', {
        details: {
          id: request.id,
          remaining: String(amount),
          event_remaining: String(claim.remaining_lseth_amount),
        },
      })
    }
  }
  return { height, amount, max_redeemable_eth: maxEth }
}

function statusOf(
  request: RedeemRequestInput,
  current: RedeemRequestCurrent,
  stackTotal: bigint,
): [StatusClaim, StatusSatisfaction] {
  const claim: StatusClaim =
    current.amount === 0n
      ? 'FULLY_CLAIMED'
      : current.amount === request.amount
        ? 'NOT_CLAIMED'
        : 'PARTIALLY_CLAIMED'
  const end = current.height + current.amount
  const satisfaction: StatusSatisfaction =
    current.amount === 0n || stackTotal >= end
      ? 'FULLY_SATISFIED'
      : stackTotal > current.height
        ? 'PARTIALLY_SATISFIED'
        : 'PENDING_SATISFACTION'
  return [claim, satisfaction]
}

/**
 * The read model of one request: claimed amounts from its claims, claimable amounts from simulating a claim
 * now, withdrawal_event_id (-3 fully claimed, -1 no event covers the current height) and statuses
 * (satisfaction of the unclaimed range [current height, end) against the withdrawal stack total).
 * `events` must be the whole validated stack (see `computeRedeemRequestStates`).
 *
 * @example
 * computeRedeemRequestState(request, claimsOfRequest, events).status_claim // 'PARTIALLY_CLAIMED'
 */
export function computeRedeemRequestState(
  request: RedeemRequestInput,
  claims: readonly RedeemClaimInput[],
  events: readonly WithdrawalEventInput[],
): RedeemRequestState {
  if (request.amount <= 0n || request.height < 0n || request.max_redeemable_eth < 0n) {
    throw new RedeemStateError('redeem request amounts are invalid', { details: { id: request.id } })
  }
  const current = currentRedeemRequest(request, claims)
  const claim = simulateClaim(current, events)
  const [statusClaim, statusSatisfaction] = statusOf(request, current, stackEnd(events))
  const eventIndex = current.amount === 0n ? -1 : findWithdrawalEvent(events, current.height)
  return {
    id: request.id,
    owner: request.owner,
    height: request.height,
    total_amount_lseth: request.amount,
    claimed_amount_lseth: request.amount - current.amount,
    claimable_amount_lseth: claim.lseth_amount,
    claimed_amount_eth: request.max_redeemable_eth - current.max_redeemable_eth,
    claimable_amount_eth: claim.eth_amount,
    max_redeemable_amount_eth: request.max_redeemable_eth,
    withdrawal_event_id:
      current.amount === 0n ? RESOLVE_FULLY_CLAIMED : eventIndex === -1 ? RESOLVE_UNSATISFIED : eventIndex,
    requested_at: request.requested_at,
    timestamp: isoTimestampOf(request.requested_at, 'requested_at'),
    status_claim: statusClaim,
    status_satisfaction: statusSatisfaction,
    current,
  }
}

/**
 * Read models of many requests: validates the withdrawal stack once, groups claims by request (keeping
 * their order) and computes each request's state. Returns them in the order of `requests`.
 *
 * @example
 * computeRedeemRequestStates(requests, events, claims).map((r) => r.withdrawal_event_id)
 */
export function computeRedeemRequestStates(
  requests: readonly RedeemRequestInput[],
  events: readonly WithdrawalEventInput[],
  claims: readonly RedeemClaimInput[],
): RedeemRequestState[] {
  validateWithdrawalStack(events)
  const byRequest = new Map<number, RedeemClaimInput[]>()
  for (const claim of claims) {
    const list = byRequest.get(claim.redeem_request_id)
    if (list) list.push(claim)
    else byRequest.set(claim.redeem_request_id, [claim])
  }
  return requests.map((request) =>
    computeRedeemRequestState(request, byRequest.get(request.id) ?? [], events),
  )
}

/**
 * The redeem manager's totals: the end of the redeem queue (the request with the highest id: height + amount
 * at creation) and the end of the withdrawal stack.
 *
 * @example
 * computeRedeemManagerInfo(requests, events) // { total_amount_redeem_queue_lseth: 15n, total_amount_withdrawal_stack_lseth: 9n }
 */
export function computeRedeemManagerInfo(
  requests: readonly Pick<RedeemRequestInput, 'id' | 'height' | 'amount'>[],
  events: readonly WithdrawalEventInput[],
): RedeemManagerInfo {
  validateWithdrawalStack(events)
  let last: Pick<RedeemRequestInput, 'id' | 'height' | 'amount'> | undefined
  for (const request of requests) if (last === undefined || request.id > last.id) last = request
  return {
    total_amount_redeem_queue_lseth: last === undefined ? 0n : last.height + last.amount,
    total_amount_withdrawal_stack_lseth: stackEnd(events),
  }
}

/**
 * Equivalent of the contract's `resolveRedeemRequests(ids)`: per id, -2 when the id is not a request
 * (id >= count, or not an integer), -3 when its current amount is 0, -1 when the stack is empty or ends at or
 * below its current height, else the id of the event covering its current height.
 *
 * @example
 * resolveRedeemRequests([0, 7], currentById, events) // [0, -2]
 */
export function resolveRedeemRequests(
  ids: readonly number[],
  requests: readonly Pick<RedeemRequestCurrent, 'height' | 'amount'>[],
  events: readonly WithdrawalEventInput[],
): number[] {
  const end = stackEnd(events)
  return ids.map((id) => {
    const request = Number.isInteger(id) && id >= 0 ? requests[id] : undefined
    if (request === undefined) return RESOLVE_OUT_OF_BOUNDS
    if (request.amount === 0n) return RESOLVE_FULLY_CLAIMED
    if (events.length === 0 || end <= request.height) return RESOLVE_UNSATISFIED
    const index = findWithdrawalEvent(events, request.height)
    return index === -1 ? RESOLVE_UNSATISFIED : (events[index] as WithdrawalEventInput).id
  })
}

/** A redeem request as the API shows it (amounts as LsETH / ETH decimal strings). */
export type PresentedRedeemRequest = Record<string, string | number>

/**
 * Presents a request for `/eth/v1/redeems` (version 'v1') or `/eth/v0/redeems` ('v0'): the interface's fields,
 * amounts as exact decimal strings (`formatUnits18`). v0 omits claimed_amount_eth, claimable_amount_eth and
 * timestamp; v1 shows claimable_amount_eth only when `displayEth` (default true).
 *
 * @example
 * presentRedeemRequest(state, 'v1', { displayEth: false }).claimable_amount_eth // undefined
 */
export function presentRedeemRequest(
  state: RedeemRequestState,
  version: 'v0' | 'v1',
  options: { displayEth?: boolean } = {},
): PresentedRedeemRequest {
  const out: PresentedRedeemRequest = {
    id: state.id,
    owner: state.owner,
    height: formatUnits18(state.height),
    total_amount_lseth: formatUnits18(state.total_amount_lseth),
    claimed_amount_lseth: formatUnits18(state.claimed_amount_lseth),
    claimable_amount_lseth: formatUnits18(state.claimable_amount_lseth),
  }
  if (version === 'v1') {
    out.claimed_amount_eth = formatUnits18(state.claimed_amount_eth)
    if (options.displayEth !== false) out.claimable_amount_eth = formatUnits18(state.claimable_amount_eth)
  }
  out.max_redeemable_amount_eth = formatUnits18(state.max_redeemable_amount_eth)
  out.withdrawal_event_id = state.withdrawal_event_id
  out.requested_at = state.requested_at
  if (version === 'v1') out.timestamp = state.timestamp
  out.status_claim = state.status_claim
  out.status_satisfaction = state.status_satisfaction
  return out
}
