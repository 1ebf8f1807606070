import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { RedeemStateError } from './errors.ts'
import type { ProjectionContext } from './projections.ts'
import {
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
    numRuns: 200,
  })('property: a projection is in the past iff the stack already covers the position', (end, elapsed) => {
    const projection = projectPosition(end, events, { ...ctx, now: LAST + elapsed })
    if (end <= 10n * E) expect(projection.projected_at <= LAST).toBe(true)
    else expect(projection.projected_at > LAST + elapsed).toBe(true)
  })
})
