import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { RedeemStateError } from './errors.ts'
import type { RedeemClaimInput, RedeemRequestInput, WithdrawalEventInput } from './redemptions.ts'
import {
  computeRedeemManagerInfo,
  computeRedeemRequestStates,
  findWithdrawalEvent,
  presentRedeemRequest,
  resolveRedeemRequests,
  simulateClaim,
  validateWithdrawalStack,
} from './redemptions.ts'

const E = 10n ** 18n

/**
 * A model of the RedeemManager contract (pre-1.3 claim semantics, PROTOCOL.md) written from the Solidity:
 * storage, the dichotomic resolution, the recursive claim, and the events each call emits.
 */
class RedeemManagerModel {
  requests: { height: bigint; amount: bigint; max: bigint }[] = []
  events: { height: bigint; amount: bigint; eth: bigint }[] = []
  requestLogs: RedeemRequestInput[] = []
  withdrawalLogs: WithdrawalEventInput[] = []
  claimLogs: RedeemClaimInput[] = []

  queueEnd(): bigint {
    const last = this.requests[this.requests.length - 1]
    return last ? last.height + last.amount : 0n
  }

  stackEnd(): bigint {
    const last = this.events[this.events.length - 1]
    return last ? last.height + last.amount : 0n
  }

  requestRedeem(amount: bigint, rateMicro: bigint, at: number): void {
    const id = this.requests.length
    const height = this.queueEnd()
    const max = (amount * rateMicro) / 1_000_000n
    this.requests.push({ height, amount, max })
    this.requestLogs.push({ id, owner: `0x${id}`, height, amount, max_redeemable_eth: max, requested_at: at })
  }

  reportWithdraw(amount: bigint, rateMicro: bigint, at: number): void {
    const id = this.events.length
    const height = this.stackEnd()
    const eth = (amount * rateMicro) / 1_000_000n
    this.events.push({ height, amount, eth })
    this.withdrawalLogs.push({ id, height, amount, eth_amount: eth, reported_at: at })
  }

  isMatch(request: { height: bigint }, event: { height: bigint; amount: bigint }): boolean {
    return request.height < event.height + event.amount && request.height >= event.height
  }

  resolve(id: number): number {
    const request = this.requests[id]
    if (request === undefined) return -2
    if (request.amount === 0n) return -3
    if (this.events.length === 0 || this.stackEnd() <= request.height) return -1
    let max = this.events.length - 1
    if (this.isMatch(request, this.events[max] as (typeof this.events)[0])) return max
    let min = 0
    if (this.isMatch(request, this.events[min] as (typeof this.events)[0])) return min
    while (min !== max) {
      const mid = Math.trunc((min + max) / 2)
      const event = this.events[mid] as (typeof this.events)[0]
      if (this.isMatch(request, event)) return mid
      if (request.height < event.height) max = mid
      else min = mid
    }
    return min
  }

  claim(id: number): { lseth: bigint; eth: bigint } | null {
    let eventId = this.resolve(id)
    if (eventId < 0) return null
    const request = this.requests[id] as (typeof this.requests)[0]
    let lseth = 0n
    let eth = 0n
    for (;;) {
      const event = this.events[eventId] as (typeof this.events)[0]
      let matched = event.height + event.amount - request.height
      if (request.amount < matched) matched = request.amount
      let paid = (matched * event.eth) / event.amount
      const cap = (matched * request.max) / request.amount
      if (cap < paid) paid = cap
      request.height += matched
      request.amount -= matched
      request.max -= paid
      lseth += matched
      eth += paid
      if (request.amount > 0n && eventId + 1 < this.events.length) eventId += 1
      else break
    }
    this.claimLogs.push({
      redeem_request_id: id,
      lseth_amount: lseth,
      eth_amount: eth,
      remaining_lseth_amount: request.amount,
    })
    return { lseth, eth }
  }

  clone(): RedeemManagerModel {
    const copy = new RedeemManagerModel()
    copy.requests = this.requests.map((r) => ({ ...r }))
    copy.events = this.events.map((e) => ({ ...e }))
    return copy
  }
}

type Command =
  | { kind: 'request'; amount: bigint; rateMicro: bigint }
  | { kind: 'withdraw'; permille: bigint; rateMicro: bigint }
  | { kind: 'claim'; pick: number }

const arbCommands = fc.array(
  fc.oneof(
    fc.record({
      kind: fc.constant('request' as const),
      amount: fc.oneof(fc.bigInt({ min: 1n, max: 100n }), fc.bigInt({ min: 1n, max: 100n * E })),
      rateMicro: fc.bigInt({ min: 900_000n, max: 1_500_000n }),
    }),
    fc.record({
      kind: fc.constant('withdraw' as const),
      permille: fc.bigInt({ min: 1n, max: 1000n }),
      rateMicro: fc.bigInt({ min: 800_000n, max: 1_600_000n }),
    }),
    fc.record({ kind: fc.constant('claim' as const), pick: fc.nat() }),
  ),
  { minLength: 1, maxLength: 40 },
)

function run(commands: Command[]): RedeemManagerModel {
  const model = new RedeemManagerModel()
  commands.forEach((command, step) => {
    const at = 1_777_593_600 + step * 3600
    if (command.kind === 'request') model.requestRedeem(command.amount, command.rateMicro, at)
    else if (command.kind === 'withdraw') {
      const demand = model.queueEnd() - model.stackEnd()
      const amount = (demand * command.permille) / 1000n
      if (amount > 0n) model.reportWithdraw(amount, command.rateMicro, at)
    } else if (model.requests.length > 0) model.claim(command.pick % model.requests.length)
  })
  return model
}

describe('computeRedeemRequestStates', () => {
  test('behavior: a hand example with a partial claim, the maxRedeemableEth cap and two events', () => {
    const requests: RedeemRequestInput[] = [
      { id: 0, owner: '0xa', height: 0n, amount: 10n * E, max_redeemable_eth: 10n * E, requested_at: 100 },
      { id: 1, owner: '0xb', height: 10n * E, amount: 5n * E, max_redeemable_eth: 6n * E, requested_at: 200 },
    ]
    const first: WithdrawalEventInput[] = [
      { id: 0, height: 0n, amount: 4n * E, eth_amount: 44n * 10n ** 17n },
    ]
    const [r0, r1] = computeRedeemRequestStates(requests, first, [])
    // 4 LsETH pay 4.4 ETH, capped at 4 x 10 / 10 = 4 ETH (0.4 ETH go to the exceeding buffer)
    expect(r0).toMatchObject({
      claimable_amount_lseth: 4n * E,
      claimable_amount_eth: 4n * E,
      claimed_amount_lseth: 0n,
      withdrawal_event_id: 0,
      status_claim: 'NOT_CLAIMED',
      status_satisfaction: 'PARTIALLY_SATISFIED',
      timestamp: '1970-01-01T00:01:40Z',
    })
    expect(r1).toMatchObject({
      withdrawal_event_id: -1,
      claimable_amount_lseth: 0n,
      status_satisfaction: 'PENDING_SATISFACTION',
    })

    const claims: RedeemClaimInput[] = [
      { redeem_request_id: 0, lseth_amount: 4n * E, eth_amount: 4n * E, remaining_lseth_amount: 6n * E },
    ]
    const pending = computeRedeemRequestStates(requests, first, claims)[0]
    expect(pending).toMatchObject({
      claimed_amount_lseth: 4n * E,
      claimed_amount_eth: 4n * E,
      claimable_amount_lseth: 0n,
      withdrawal_event_id: -1,
      status_claim: 'PARTIALLY_CLAIMED',
      status_satisfaction: 'PENDING_SATISFACTION',
      current: { height: 4n * E, amount: 6n * E, max_redeemable_eth: 6n * E },
    })

    const both = [...first, { id: 1, height: 4n * E, amount: 11n * E, eth_amount: 132n * 10n ** 17n }]
    const [s0, s1] = computeRedeemRequestStates(requests, both, claims)
    expect(s0).toMatchObject({
      claimable_amount_lseth: 6n * E,
      claimable_amount_eth: 6n * E,
      withdrawal_event_id: 1,
    })
    expect(s0?.status_satisfaction).toBe('FULLY_SATISFIED')
    expect(s1).toMatchObject({
      claimable_amount_lseth: 5n * E,
      claimable_amount_eth: 6n * E,
      status_claim: 'NOT_CLAIMED',
    })

    const done = computeRedeemRequestStates(requests, both, [
      ...claims,
      { redeem_request_id: 0, lseth_amount: 6n * E, eth_amount: 6n * E, remaining_lseth_amount: 0n },
    ])[0]
    expect(done).toMatchObject({
      withdrawal_event_id: -3,
      status_claim: 'FULLY_CLAIMED',
      claimable_amount_lseth: 0n,
    })
    expect(computeRedeemManagerInfo(requests, both)).toEqual({
      total_amount_redeem_queue_lseth: 15n * E,
      total_amount_withdrawal_stack_lseth: 15n * E,
    })
  })

  test('behavior: inconsistent event data is refused', () => {
    const request: RedeemRequestInput = {
      id: 0,
      owner: '0xa',
      height: 0n,
      amount: 10n,
      max_redeemable_eth: 10n,
      requested_at: 1,
    }
    expect(() => validateWithdrawalStack([{ id: 0, height: 1n, amount: 1n, eth_amount: 1n }])).toThrow(
      RedeemStateError,
    )
    expect(() => validateWithdrawalStack([{ id: 1, height: 0n, amount: 1n, eth_amount: 1n }])).toThrow(
      RedeemStateError,
    )
    const claim = { redeem_request_id: 0, lseth_amount: 11n, eth_amount: 0n }
    expect(() => computeRedeemRequestStates([request], [], [claim])).toThrow(RedeemStateError)
    const wrongRemaining = {
      redeem_request_id: 0,
      lseth_amount: 1n,
      eth_amount: 0n,
      remaining_lseth_amount: 1n,
    }
    expect(() => computeRedeemRequestStates([request], [], [wrongRemaining])).toThrow(RedeemStateError)
  })

  test.prop([arbCommands], { numRuns: runs(300) })(
    'property: states rebuilt from the events equal the contract model, and claimable + claimed <= total',
    (commands) => {
      const model = run(commands)
      const states = computeRedeemRequestStates(model.requestLogs, model.withdrawalLogs, model.claimLogs)
      const total = { lseth: 0n }
      states.forEach((state, id) => {
        const stored = model.requests[id] as RedeemManagerModel['requests'][0]
        expect(state.current).toEqual({
          height: stored.height,
          amount: stored.amount,
          max_redeemable_eth: stored.max,
        })
        expect(state.claimed_amount_lseth + state.claimable_amount_lseth <= state.total_amount_lseth).toBe(
          true,
        )
        // what a claim now would really pay
        const paid = model.clone().claim(id) ?? { lseth: 0n, eth: 0n }
        expect({ lseth: state.claimable_amount_lseth, eth: state.claimable_amount_eth }).toEqual(paid)
        expect(state.withdrawal_event_id).toBe(model.resolve(id))
        // the interface's state table
        const covered = state.claimed_amount_lseth + state.claimable_amount_lseth
        if (state.status_satisfaction === 'FULLY_SATISFIED') expect(covered).toBe(state.total_amount_lseth)
        if (state.status_satisfaction === 'PARTIALLY_SATISFIED') {
          expect(state.claimable_amount_lseth > 0n && covered < state.total_amount_lseth).toBe(true)
          expect(state.withdrawal_event_id >= 0).toBe(true)
        }
        if (state.status_satisfaction === 'PENDING_SATISFACTION') {
          expect(state.claimable_amount_lseth).toBe(0n)
          expect(state.withdrawal_event_id).toBe(-1)
        }
        expect(state.status_claim === 'FULLY_CLAIMED').toBe(state.withdrawal_event_id === -3)
        expect(state.status_claim === 'NOT_CLAIMED').toBe(state.claimed_amount_lseth === 0n)
        total.lseth += state.total_amount_lseth
      })
      expect(computeRedeemManagerInfo(model.requestLogs, model.withdrawalLogs)).toEqual({
        total_amount_redeem_queue_lseth: model.queueEnd(),
        total_amount_withdrawal_stack_lseth: model.stackEnd(),
      })
      expect(total.lseth).toBe(model.queueEnd())
    },
  )
})

describe('resolveRedeemRequests', () => {
  test.prop([arbCommands, fc.array(fc.integer({ min: -2, max: 60 }), { maxLength: 10 })], {
    numRuns: runs(200),
  })('property: equals the contract resolution (-1 / -2 / -3 / event id)', (commands, ids) => {
    const model = run(commands)
    const current = model.requests.map((r) => ({ height: r.height, amount: r.amount }))
    expect(resolveRedeemRequests(ids, current, model.withdrawalLogs)).toEqual(
      ids.map((id) => model.resolve(id)),
    )
  })

  test('behavior: out of bounds, fully claimed, unsatisfied and matched', () => {
    const events: WithdrawalEventInput[] = [
      { id: 0, height: 0n, amount: 5n, eth_amount: 5n },
      { id: 1, height: 5n, amount: 5n, eth_amount: 5n },
    ]
    const requests = [
      { height: 0n, amount: 0n },
      { height: 7n, amount: 3n },
      { height: 10n, amount: 4n },
    ]
    expect(resolveRedeemRequests([0, 1, 2, 3, -1, 1.5], requests, events)).toEqual([-3, 1, -1, -2, -2, -2])
    expect(resolveRedeemRequests([1], requests, [])).toEqual([-1])
    expect(findWithdrawalEvent(events, 5n)).toBe(1)
    expect(findWithdrawalEvent(events, 10n)).toBe(-1)
    expect(simulateClaim({ height: 7n, amount: 0n, max_redeemable_eth: 0n }, events).steps).toEqual([])
  })
})

describe('presentRedeemRequest', () => {
  test('behavior: shows the v1 and v0 fields of the interface, amounts as decimal strings', () => {
    const request: RedeemRequestInput = {
      id: 3,
      owner: '0xa',
      height: 15n * E,
      amount: 20n * E,
      max_redeemable_eth: 21n * E,
      requested_at: 1_777_593_600,
    }
    const [state] = computeRedeemRequestStates([request], [], [])
    if (state === undefined) throw new Error('no state')
    expect(presentRedeemRequest(state, 'v1')).toEqual({
      id: 3,
      owner: '0xa',
      height: '15',
      total_amount_lseth: '20',
      claimed_amount_lseth: '0',
      claimable_amount_lseth: '0',
      claimed_amount_eth: '0',
      claimable_amount_eth: '0',
      max_redeemable_amount_eth: '21',
      withdrawal_event_id: -1,
      requested_at: 1_777_593_600,
      timestamp: '2026-05-01T00:00:00Z',
      status_claim: 'NOT_CLAIMED',
      status_satisfaction: 'PENDING_SATISFACTION',
    })
    expect(presentRedeemRequest(state, 'v1', { displayEth: false })).not.toHaveProperty(
      'claimable_amount_eth',
    )
    const v0 = presentRedeemRequest(state, 'v0')
    for (const field of ['claimed_amount_eth', 'claimable_amount_eth', 'timestamp'])
      expect(v0).not.toHaveProperty(field)
  })
})
