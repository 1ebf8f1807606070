import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { RedeemStateError } from './errors.ts'
import type { Projection, ProjectionContext } from './projections.ts'
import {
  explainProjection,
  nextReportAfter,
  projectPosition,
  projectRedeemManager,
  projectRedeemRequest,
} from './projections.ts'
import type { WithdrawalEventInput } from './redemptions.ts'

const E = 10n ** 18n
const LAST = 1_777_636_800 // 2026-05-01T12:00:00Z
const events: WithdrawalEventInput[] = [
  { id: 0, height: 0n, amount: 5n * E, eth_amount: 5n * E, reported_at: LAST - 86_400 },
  { id: 1, height: 5n * E, amount: 5n * E, eth_amount: 5n * E, reported_at: LAST },
]
const ctx: ProjectionContext = {
  now: LAST + 3600,
  last_report_at: LAST,
  underlying: 11n * E,
  supply: 10n * E,
  redeem_buffer_eth: 2n * E,
  expected_daily_skims_eth: E,
  exit_queue: { exit_seconds: 1920, mandatory_exit_delay_seconds: 98_304, sweep_seconds: 375_000 },
}

describe('nextReportAfter', () => {
  test('behavior: the first scheduled report strictly after an instant', () => {
    expect(nextReportAfter(1000, 100, 86_400)).toBe(86_500)
    expect(nextReportAfter(86_500, 100, 86_400)).toBe(172_900)
    expect(nextReportAfter(50, 100, 86_400)).toBe(86_500)
  })
})

describe('projectRedeemRequest', () => {
  test('behavior: a satisfied request is dated by the report whose event covers its end', () => {
    const first = projectRedeemRequest({ height: 0n, amount: 3n * E }, events, ctx)
    expect(first).toMatchObject({ basis: 'satisfied', projected_redeemable_at: '2026-04-30T12:00:00Z' })
    expect(projectRedeemRequest({ height: 3n * E, amount: 7n * E }, events, ctx).projected_at).toBe(LAST)
  })

  test('behavior: the buffer and skims cover a small shortfall at the next report; else validators must exit', () => {
    // shortfall 2 LsETH = 2.2 ETH <= 2 + 1 ETH
    const small = projectRedeemRequest({ height: 10n * E, amount: 2n * E }, events, ctx)
    expect(small).toMatchObject({ basis: 'buffer', shortfall_lseth: 2n * E, shortfall_eth: 22n * 10n ** 17n })
    expect(small.projected_redeemable_at).toBe('2026-05-02T12:00:00Z')
    const large = projectRedeemRequest({ height: 10n * E, amount: 100n * E }, events, ctx)
    expect(large.basis).toBe('exit_queue')
    // now + 1920 + 98304 + 375000 s = 2026-05-07T01:00:24Z, then the next noon report
    expect(large.projected_redeemable_at).toBe('2026-05-07T12:00:00Z')
  })

  test('behavior: the manager projection covers the end of the queue; an empty queue has no demand', () => {
    expect(projectRedeemManager({ total_amount_redeem_queue_lseth: 10n * E }, events, ctx)).toMatchObject({
      basis: 'satisfied',
      projected_fulfilled_at: '2026-05-01T12:00:00Z',
    })
    expect(projectRedeemManager({ total_amount_redeem_queue_lseth: 0n }, [], ctx).basis).toBe('no_demand')
    const noTime = [{ id: 0, height: 0n, amount: 5n, eth_amount: 5n }]
    expect(() => projectPosition(5n, noTime, ctx)).toThrow(RedeemStateError)
  })

  test.prop([fc.bigInt({ min: 1n, max: 1000n * E }), fc.integer({ min: 0, max: 30 * 86_400 })], {
    numRuns: runs(200),
  })('property: a projection is in the past iff the stack already covers the position', (end, elapsed) => {
    const projection = projectPosition(end, events, { ...ctx, now: LAST + elapsed })
    if (end <= 10n * E) expect(projection.projected_at <= LAST).toBe(true)
    else expect(projection.projected_at > LAST + elapsed).toBe(true)
  })
})

describe('explainProjection', () => {
  test('behavior: each case names the inputs it was decided from and the next report after now', () => {
    const next = { next_calculation_at: LAST + 86_400, next_calculation_at_iso: '2026-05-02T12:00:00Z' }
    expect(explainProjection(4n * E, events, ctx)).toEqual({
      case: 'satisfied',
      inputs: {
        queue_position_lseth: 4n * E,
        withdrawal_stack_lseth: 10n * E,
        shortfall_lseth: 0n,
        shortfall_eth: 0n,
        redeem_buffer_eth: 2n * E,
        expected_daily_skims_eth: E,
        exit_queue: null,
      },
      ...next,
    })
    expect(explainProjection(12n * E, events, ctx)).toMatchObject({
      case: 'buffer',
      inputs: { shortfall_lseth: 2n * E, shortfall_eth: 22n * 10n ** 17n, exit_queue: null },
      ...next,
    })
    expect(explainProjection(110n * E, events, ctx)).toMatchObject({
      case: 'exit_queue',
      inputs: {
        queue_position_lseth: 110n * E,
        shortfall_lseth: 100n * E,
        shortfall_eth: 110n * E,
        exit_queue: { exit_seconds: 1920, mandatory_exit_delay_seconds: 98_304, sweep_seconds: 375_000 },
      },
      ...next,
    })
    expect(explainProjection(0n, [], ctx)).toMatchObject({
      case: 'no_demand',
      inputs: { queue_position_lseth: 0n, withdrawal_stack_lseth: 0n, exit_queue: null },
      ...next,
    })
  })

  test('behavior: the next calculation follows the report schedule, not the projected instant', () => {
    const late = { ...ctx, now: LAST + 3 * 86_400 + 1, report_interval_seconds: 43_200 }
    // reports every 12 h after LAST: the first strictly after now is LAST + 3.5 days
    expect(explainProjection(110n * E, events, late).next_calculation_at).toBe(LAST + 3.5 * 86_400)
  })
})

const DAY = 86_400
/** A random projection context with a withdrawal stack consistent with it (events reported by the last report). */
const contextArb = fc
  .record({
    eventAmounts: fc.array(fc.bigInt({ min: 0n, max: 50n * E }), { maxLength: 6 }),
    eventGaps: fc.array(fc.integer({ min: 0, max: 3 * DAY }), { minLength: 6, maxLength: 6 }),
    lastReportAfterEvents: fc.integer({ min: 0, max: 3 * DAY }),
    nowOffset: fc.integer({ min: -DAY, max: 10 * DAY }),
    interval: fc.constantFrom(DAY, DAY / 2, 3600, 7 * DAY),
    supply: fc.bigInt({ min: 1n, max: 10n ** 9n * E }),
    rateNum: fc.bigInt({ min: 1n, max: 3000n }),
    buffer: fc.bigInt({ min: 0n, max: 40n * E }),
    skims: fc.bigInt({ min: 0n, max: 40n * E }),
    exitSeconds: fc.integer({ min: 0, max: 60 * DAY }),
    delaySeconds: fc.integer({ min: 0, max: 2 * DAY }),
    sweepSeconds: fc.integer({ min: 0, max: 10 * DAY }),
  })
  .map((r) => {
    let height = 0n
    let at = LAST - 30 * DAY
    const stack: WithdrawalEventInput[] = r.eventAmounts.map((amount, id) => {
      at += r.eventGaps[id] ?? 0
      const event = { id, height, amount, eth_amount: amount, reported_at: at }
      height += amount
      return event
    })
    const lastReportAt = at + r.lastReportAfterEvents
    const context: ProjectionContext = {
      now: lastReportAt + r.nowOffset,
      last_report_at: lastReportAt,
      report_interval_seconds: r.interval,
      underlying: (r.supply * r.rateNum) / 1000n,
      supply: r.supply,
      redeem_buffer_eth: r.buffer,
      expected_daily_skims_eth: r.skims,
      exit_queue: {
        exit_seconds: r.exitSeconds,
        mandatory_exit_delay_seconds: r.delaySeconds,
        sweep_seconds: r.sweepSeconds,
      },
    }
    return { stack, context }
  })

/** Requests in queue order: each starts at or after the end of the previous one. */
const queueArb = fc
  .array(fc.tuple(fc.bigInt({ min: 0n, max: 20n * E }), fc.bigInt({ min: 1n, max: 60n * E })), {
    minLength: 2,
    maxLength: 12,
  })
  .map((steps) => {
    let end = 0n
    return steps.map(([gap, amount]) => {
      const request = { height: end + gap, amount }
      end = request.height + amount
      return request
    })
  })

describe('projection ordering', () => {
  test.prop([contextArb, queueArb], { numRuns: runs(500) })(
    'property: a request later in the queue is never projected earlier than one ahead of it',
    ({ stack, context }, requests) => {
      const projected = requests.map((r) => projectRedeemRequest(r, stack, context))
      for (let i = 1; i < projected.length; i++) {
        const [before, after] = [projected[i - 1], projected[i]] as [Projection, Projection]
        expect(after.shortfall_lseth >= before.shortfall_lseth).toBe(true)
        expect(after.projected_at, `${before.basis} then ${after.basis}`).toBeGreaterThanOrEqual(
          before.projected_at,
        )
      }
    },
  )

  test.prop([contextArb, fc.bigInt({ min: 0n, max: 400n * E })], { numRuns: runs(300) })(
    'property: the explanation is the decision: its case is the basis and its shortfall adds up',
    ({ stack, context }, end) => {
      const explanation = explainProjection(end, stack, context)
      const decided = projectPosition(end, stack, context)
      expect(explanation.case).toBe(decided.basis)
      const { inputs } = explanation
      expect(inputs.shortfall_lseth).toBe(
        end > inputs.withdrawal_stack_lseth ? end - inputs.withdrawal_stack_lseth : 0n,
      )
      expect(inputs.exit_queue === null).toBe(decided.basis !== 'exit_queue')
      expect(explanation.next_calculation_at > context.now).toBe(true)
      expect(
        explanation.next_calculation_at <= decided.projected_at ||
          decided.basis === 'satisfied' ||
          decided.basis === 'no_demand',
      ).toBe(true)
    },
  )
})
