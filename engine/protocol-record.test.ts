import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { addDaysToDate, utcDateOf } from './dates.ts'
import { Dec, formatDec, toDec } from './decimal.ts'
import { InvalidInputError } from './errors.ts'
import type { RateObservation } from './protocol-record.ts'
import { computeASrr7d, computeProtocolRecord, presentProtocolRecord } from './protocol-record.ts'

const DAY = 86_400
const T0 = 1_777_593_600 + 12 * 3600 // reports at noon UTC

/** Daily reports with U multiplied by `growth` (num/den) each day, S constant, exact. */
function growingHistory(days: number, num: bigint, den: bigint): RateObservation[] {
  const supply = 10n ** 21n
  let underlying = supply * den ** BigInt(days)
  return Array.from({ length: days + 1 }, (_, j) => {
    if (j > 0) underlying = (underlying * num) / den
    return { timestamp: T0 + j * DAY, underlying, supply }
  })
}

describe('computeASrr7d', () => {
  test('behavior: annualizes one day of 0.01 % to 3.65 %', () => {
    expect(
      computeASrr7d([
        { timestamp: 0, underlying: 100n, supply: 100n },
        { timestamp: DAY, underlying: 10001n, supply: 10000n },
      ]),
    ).toBe('3.65')
  })

  test('behavior: null without a previous report; fewer than 7 days gives the mean of what exists', () => {
    expect(computeASrr7d([])).toBeNull()
    expect(computeASrr7d([{ timestamp: T0, underlying: 1n, supply: 1n }])).toBeNull()
    const history = [
      { timestamp: T0, underlying: 10_000n, supply: 10_000n },
      { timestamp: T0 + DAY, underlying: 10_001n, supply: 10_000n },
      { timestamp: T0 + 2 * DAY, underlying: 10_001n, supply: 10_000n },
    ]
    // (3.65 + 0) / 2
    expect(computeASrr7d(history)).toBe('1.825')
  })

  test('behavior: the window is the report date and the 6 dates before it', () => {
    // 9 days: day 1 earns 1 % (outside the window of day 8), the rest earn nothing
    const history: RateObservation[] = [
      { timestamp: T0, underlying: 100n, supply: 100n },
      { timestamp: T0 + DAY, underlying: 101n, supply: 100n },
      ...Array.from({ length: 7 }, (_, i) => ({
        timestamp: T0 + (i + 2) * DAY,
        underlying: 101n,
        supply: 100n,
      })),
    ]
    expect(computeASrr7d(history)).toBe('0')
    expect(computeASrr7d(history.slice(0, 8))).not.toBe('0')
  })

  test('behavior: the elapsed time between reports annualizes each step', () => {
    const twoDays = [
      { timestamp: T0, underlying: 10_000n, supply: 10_000n },
      { timestamp: T0 + 2 * DAY, underlying: 10_002n, supply: 10_000n },
    ]
    expect(computeASrr7d(twoDays)).toBe('3.65')
    expect(() => computeASrr7d([...twoDays].reverse())).toThrow(InvalidInputError)
  })

  test.prop([fc.integer({ min: 1, max: 20 }), fc.bigInt({ min: 10_000n, max: 10_010n })], { numRuns: 100 })(
    'property: a constant daily growth gives exactly its annualized rate',
    (days, num) => {
      const history = growingHistory(days, num, 10_000n)
      const apr = new Dec((num - 10_000n).toString()).div(10_000).mul(365).mul(100)
      expect(computeASrr7d(history)).toBe(formatDec(apr))
    },
  )

  test.prop(
    [
      fc.array(
        fc.tuple(
          fc.integer({ min: 3600, max: 3 * DAY }),
          fc.bigInt({ min: 10n ** 20n, max: 10n ** 24n }),
          fc.bigInt({ min: 10n ** 20n, max: 10n ** 24n }),
        ),
        { minLength: 2, maxLength: 12 },
      ),
    ],
    { numRuns: 200 },
  )('property: equals the decimal.js mean of the annualized steps (to 1e-18)', (steps) => {
    let timestamp = T0
    const history = steps.map(([gap, underlying, supply]) => {
      timestamp += gap
      return { timestamp, underlying, supply }
    })
    const last = history[history.length - 1] as RateObservation
    const windowStart = addDaysToDate(utcDateOf(last.timestamp), -6)
    const terms: Dec[] = []
    for (let j = history.length - 1; j >= 1; j--) {
      const cur = history[j] as RateObservation
      const prev = history[j - 1] as RateObservation
      if (utcDateOf(cur.timestamp) < windowStart) break
      const ratio = toDec(cur.underlying)
        .mul(toDec(prev.supply))
        .div(toDec(cur.supply).mul(toDec(prev.underlying)))
      terms.push(
        ratio
          .minus(1)
          .mul(365 * DAY)
          .div(cur.timestamp - prev.timestamp)
          .mul(100),
      )
    }
    const mean = terms.reduce((a, b) => a.plus(b), new Dec(0)).div(terms.length)
    const actual = computeASrr7d(history)
    expect({
      diff: toDec(actual as string)
        .minus(mean)
        .abs()
        .lte('1e-18'),
      actual,
      mean: mean.toFixed(20),
    }).toEqual({
      diff: true,
      actual,
      mean: mean.toFixed(20),
    })
  })
})

describe('computeProtocolRecord', () => {
  test('behavior: builds every field of the interface protocol record', () => {
    const record = computeProtocolRecord({
      oracle_report: '400123',
      timestamp: T0 + DAY,
      rewards: 10n ** 18n,
      global_fee_bps: 1000,
      fee_shares_minted: 99_910_080_927_165_551n,
      underlying: 1001n * 10n ** 18n,
      supply: 1000n * 10n ** 18n + 99_910_080_927_165_551n,
      mints_lseth: 5n,
      burns_lseth: 7n,
      validators_count: 30,
      stopped_validator_count_per_operator: [4, 1, 3],
      previous_reports: [{ timestamp: T0, underlying: 1000n * 10n ** 18n, supply: 1000n * 10n ** 18n }],
    })
    expect(record).toEqual({
      oracle_report: '400123',
      date: '2026-05-02T12:00:00Z',
      total_protocol_mints_lseth: 5n,
      total_protocol_burns_lseth: 7n,
      total_protocol_active_keys_count: 26,
      rewards_eth: 10n ** 18n,
      gross_fee_rate: '0.1',
      gross_fee_lseth: 99_910_080_927_165_551n,
      conversion_rate: '1.0009',
      total_lseth_supply: 1000n * 10n ** 18n + 99_910_080_927_165_551n,
      // (rate_k / rate_{k-1} - 1) x 365 x 100 with rate_{k-1} = 1 and rate_k = 1001 / (1000 + minted / 1e18)
      a_srr_7d: formatDec(
        new Dec(1001n * 10n ** 18n * 1000n * 10n ** 18n + '')
          .div((1000n * 10n ** 18n + 99_910_080_927_165_551n) * 1000n * 10n ** 18n + '')
          .minus(1)
          .mul(36_500),
      ),
    })
  })

  test('behavior: refuses negative amounts and more stopped than existing validators', () => {
    const base = {
      oracle_report: '1',
      timestamp: T0,
      rewards: 0n,
      global_fee_bps: 1000,
      fee_shares_minted: 0n,
      underlying: 1n,
      supply: 1n,
      mints_lseth: 0n,
      burns_lseth: 0n,
      validators_count: 1,
      stopped_validator_count_per_operator: [],
      previous_reports: [],
    }
    expect(computeProtocolRecord(base).a_srr_7d).toBeNull()
    expect(presentProtocolRecord(computeProtocolRecord({ ...base, supply: 4n * 10n ** 17n }))).toMatchObject({
      a_srr_7d: '0',
      total_lseth_supply: '0.4',
      total_protocol_active_keys_count: 1,
      conversion_rate: '0.000000000000000002',
    })
    expect(() => computeProtocolRecord({ ...base, rewards: -1n })).toThrow(InvalidInputError)
    expect(() => computeProtocolRecord({ ...base, stopped_validator_count_per_operator: [2, 2] })).toThrow(
      InvalidInputError,
    )
  })
})
