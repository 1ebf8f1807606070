import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { addDaysToDate, utcDateOf } from './dates.ts'
import { Dec, formatDec, toDec } from './decimal.ts'
import { InvalidInputError } from './errors.ts'
import type { RateObservation } from './protocol-record.ts'
import { computeASrr7d, computeProtocolRecord } from './protocol-record.ts'

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
  test('behavior: annualizes seven days of 0.01 % to 3.65 %', () => {
    expect(computeASrr7d(growingHistory(7, 10_001n, 10_000n))).toBe('3.65')
  })

  test('behavior: null until 7 dates of the window have a step (never 0 for unknown)', () => {
    expect(computeASrr7d([])).toBeNull()
    expect(computeASrr7d([{ timestamp: T0, underlying: 1n, supply: 1n }])).toBeNull()
    // one to six daily steps: null, even when the rate moved
    for (let days = 1; days <= 6; days++) {
      expect(computeASrr7d(growingHistory(days, 10_001n, 10_000n)), `${days} steps`).toBeNull()
    }
    // a missed date inside the window: the step after it spans two days but the window has 6 dates
    const daily = growingHistory(9, 10_001n, 10_000n)
    const missed = daily.filter((_, j) => j !== 6)
    expect(computeASrr7d(missed.slice(0, -1))).toBeNull()
    expect(computeASrr7d(missed)).toBeNull()
    // ... until the missed date leaves the window
    const later = growingHistory(13, 10_001n, 10_000n).filter((_, j) => j !== 6)
    expect(computeASrr7d(later.slice(0, -1))).toBeNull()
    expect(computeASrr7d(later)).not.toBeNull()
    expect(computeASrr7d(growingHistory(14, 10_001n, 10_000n).filter((_, j) => j !== 6))).toBe('3.65')
  })

  test('behavior: two reports on one date count as one date; both steps enter the mean', () => {
    // 7 daily reports at noon + one more at 18:00 on the last date: 6 dates with a step, then 7
    const history = growingHistory(6, 10_001n, 10_000n)
    const last = history[history.length - 1] as RateObservation
    const sameDate = [...history, { ...last, timestamp: last.timestamp + 6 * 3600 }]
    expect(computeASrr7d(sameDate)).toBeNull()
    const next = { ...last, timestamp: last.timestamp + DAY }
    // steps: 6 x 3.65 % and two of 0 % (same rate): mean 21.9 / 8 = 2.7375
    expect(computeASrr7d([...sameDate, next])).toBe('2.7375')
  })

  test.prop(
    [
      fc.integer({ min: 1, max: 7 }),
      fc.array(fc.bigInt({ min: 9_990n, max: 10_030n }), { minLength: 7, maxLength: 7 }),
    ],
    { numRuns: runs(200) },
  )('property: 1..6 dates with a step give null; 7 give the exact mean of the 7 steps', (dates, growths) => {
    // daily reports: the report of date `dates` has steps on dates 1..dates
    const supply = 10n ** 21n
    let underlying = supply * 10_000n ** 7n
    const history: RateObservation[] = [{ timestamp: T0, underlying, supply }]
    for (const growth of growths.slice(0, dates)) {
      underlying = (underlying * growth) / 10_000n
      history.push({ timestamp: T0 + history.length * DAY, underlying, supply })
    }
    const actual = computeASrr7d(history)
    if (dates < 7) {
      expect(actual).toBeNull()
      return
    }
    const mean = growths
      .map((g) => new Dec((g - 10_000n).toString()).div(10_000).mul(365).mul(100))
      .reduce((a, b) => a.plus(b), new Dec(0))
      .div(7)
    expect(actual).toBe(formatDec(mean))
  })

  test('behavior: the window is the report date and the 6 dates before it', () => {
    // 9 daily reports: the step of date 1 earns 1 % (outside the window of date 8), the rest earn nothing
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
    // the same 1 % one date later (date k - 6, the window's first date) is in: 365 % on one date of 7
    const inside = history.map((r, j) => (j === 1 ? { ...r, underlying: 100n } : r))
    expect(computeASrr7d(inside)).toBe(formatDec(new Dec(365).div(7)))
  })

  test('behavior: the elapsed time between reports annualizes each step', () => {
    // the window's first step spans two days (+0.02 %), the six others one day (+0.01 %): 3.65 % each
    const supply = 10_000n ** 8n
    const history: RateObservation[] = [{ timestamp: T0 - 2 * DAY, underlying: supply, supply }]
    for (let j = 0; j < 7; j++) {
      const underlying = 10_002n * 10_001n ** BigInt(j) * 10_000n ** BigInt(7 - j)
      history.push({ timestamp: T0 + j * DAY, underlying, supply })
    }
    expect(computeASrr7d(history)).toBe('3.65')
    expect(() => computeASrr7d([...history].reverse())).toThrow(InvalidInputError)
  })

  test.prop([fc.integer({ min: 1, max: 20 }), fc.bigInt({ min: 10_000n, max: 10_010n })], {
    numRuns: runs(100),
  })(
    'property: a constant daily growth gives exactly its annualized rate (from the 7th step on)',
    (days, num) => {
      const history = growingHistory(days, num, 10_000n)
      const apr = new Dec((num - 10_000n).toString()).div(10_000).mul(365).mul(100)
      expect(computeASrr7d(history)).toBe(days < 7 ? null : formatDec(apr))
    },
  )

  test.prop(
    [
      fc.array(
        fc.tuple(
          fc.integer({ min: 3600, max: 2 * DAY }),
          fc.bigInt({ min: 10n ** 20n, max: 10n ** 24n }),
          fc.bigInt({ min: 10n ** 20n, max: 10n ** 24n }),
        ),
        { minLength: 2, maxLength: 24 },
      ),
    ],
    { numRuns: runs(200) },
  )('property: the decimal.js mean of the annualized steps (to 1e-18), or null under 7 dates', (steps) => {
    let timestamp = T0
    const history = steps.map(([gap, underlying, supply]) => {
      timestamp += gap
      return { timestamp, underlying, supply }
    })
    const last = history[history.length - 1] as RateObservation
    const windowStart = addDaysToDate(utcDateOf(last.timestamp), -6)
    const terms: Dec[] = []
    const dates = new Set<string>()
    for (let j = history.length - 1; j >= 1; j--) {
      const cur = history[j] as RateObservation
      const prev = history[j - 1] as RateObservation
      if (utcDateOf(cur.timestamp) < windowStart) break
      dates.add(utcDateOf(cur.timestamp))
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
    const actual = computeASrr7d(history)
    if (dates.size < 7) {
      expect(actual).toBeNull()
      return
    }
    const mean = terms.reduce((a, b) => a.plus(b), new Dec(0)).div(terms.length)
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
      // a week at rate 1 before: six steps of 0 % in the window and this report's step
      previous_reports: Array.from({ length: 7 }, (_, i) => ({
        timestamp: T0 - (6 - i) * DAY,
        underlying: 1000n * 10n ** 18n,
        supply: 1000n * 10n ** 18n,
      })),
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
      // ((rate_k / rate_{k-1} - 1) x 365 x 100 + 6 x 0) / 7 with rate_{k-1} = 1, rate_k = 1001 / (1000 + minted / 1e18)
      a_srr_7d: formatDec(
        new Dec(1001n * 10n ** 18n * 1000n * 10n ** 18n + '')
          .div((1000n * 10n ** 18n + 99_910_080_927_165_551n) * 1000n * 10n ** 18n + '')
          .minus(1)
          .mul(36_500)
          .div(7),
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
    expect(() => computeProtocolRecord({ ...base, rewards: -1n })).toThrow(InvalidInputError)
    expect(() => computeProtocolRecord({ ...base, stopped_validator_count_per_operator: [2, 2] })).toThrow(
      InvalidInputError,
    )
  })
})
