import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { addDaysToDate } from './dates.ts'
import { Dec, toDec } from './decimal.ts'
import { InvalidInputError, type ReportRangeError } from './errors.ts'
import type { LotWithRates, ReportRate } from './lots.ts'
import { computeLotRewards, computeLots, rateOnOrBefore, resolveLotRates } from './lots.ts'
import { formatUnits18 } from './units.ts'

const E = 10n ** 18n
const PUBLIC_LOTS: [LotWithRates, LotWithRates] = [
  {
    balance: '1',
    from: '2024-01-01',
    to: '2024-02-01',
    start_conversion_rate: '1.0014257204933798',
    end_conversion_rate: '1.0023467329617235',
  },
  {
    balance: '3',
    from: '2024-01-15',
    to: '2024-02-15',
    start_conversion_rate: '1.0026157619809285',
    end_conversion_rate: '1.0036926274900292',
  },
]

const REPORTS: ReportRate[] = [
  { date: '2026-05-01', conversion_rate: '1.01' },
  { date: '2026-05-02', conversion_rate: '1.02' },
  { date: '2026-05-04', conversion_rate: '1.04' },
]

/** Reports on increasing dates (gaps of 1 to 3 days) with rates of up to 18 digits. */
const arbReports = fc
  .array(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.bigInt({ min: E / 2n, max: 2n * E })), {
    minLength: 1,
    maxLength: 25,
  })
  .map((steps) => {
    let date = '2026-04-20'
    return steps.map(([gap, rate]) => {
      date = addDaysToDate(date, gap)
      return { date, conversion_rate: formatUnits18(rate) }
    })
  })

const arbBalance = fc.oneof(
  fc.bigInt({ min: 0n, max: 10n ** 24n }).map(formatUnits18),
  fc.integer({ min: 0, max: 10_000 }).map(String),
)

/** Reports and three ordered dates within their range. */
const arbRange = arbReports.chain((reports) => {
  const first = reports[0] as ReportRate
  const last = reports[reports.length - 1] as ReportRate
  const days = Math.round((Date.parse(last.date) - Date.parse(first.date)) / 86_400_000)
  return fc
    .tuple(
      fc.integer({ min: 0, max: days }),
      fc.integer({ min: 0, max: days }),
      fc.integer({ min: 0, max: days }),
    )
    .map((offsets) => {
      const [a, b, c] = [...offsets].sort((x, y) => x - y) as [number, number, number]
      return {
        reports,
        from: addDaysToDate(first.date, a),
        mid: addDaysToDate(first.date, b),
        to: addDaysToDate(first.date, c),
      }
    })
})

describe('computeLots', () => {
  test('behavior: reproduces the public example exactly (total 0.0041516089956458)', () => {
    const result = computeLots(PUBLIC_LOTS)
    expect(result.balance).toBe('4')
    expect(result.accrued_rewards).toBe('0.0041516089956458')
    expect(result.lots.map((lot) => lot.accrued_rewards)).toEqual([
      '0.0009210124683437',
      '0.0032305965273021',
    ])
    expect(result.lots[1]).toEqual({ ...PUBLIC_LOTS[1], accrued_rewards: '0.0032305965273021' })
  })

  test('behavior: a falling rate accrues negative rewards; bad balances and rates are refused', () => {
    const down = computeLots([{ ...PUBLIC_LOTS[0], start_conversion_rate: '1.1', end_conversion_rate: '1' }])
    expect(down.accrued_rewards).toBe('-0.1')
    const bad = [
      { balance: '-1' },
      { balance: '1e3' },
      { balance: '0.0000000000000000001' },
      { start_conversion_rate: '0' },
      { end_conversion_rate: 'x' },
    ]
    for (const patch of bad) {
      expect(() => computeLots([{ ...PUBLIC_LOTS[0], ...patch }])).toThrow(InvalidInputError)
    }
  })

  test.prop(
    [
      fc.array(
        fc.tuple(
          arbBalance,
          fc.bigInt({ min: E / 2n, max: 2n * E }),
          fc.bigInt({ min: E / 2n, max: 2n * E }),
        ),
        { maxLength: 10 },
      ),
    ],
    {
      numRuns: runs(300),
    },
  )('property: the total balance and accrued rewards are the sums of the lots', (lots) => {
    const result = computeLots(
      lots.map(([balance, start, end]) => ({
        balance,
        from: '2026-05-01',
        to: '2026-05-02',
        start_conversion_rate: formatUnits18(start),
        end_conversion_rate: formatUnits18(end),
      })),
    )
    const sum = (values: string[]) => values.reduce((acc, v) => acc.plus(v), new Dec(0))
    expect(toDec(result.balance).eq(sum(result.lots.map((lot) => lot.balance)))).toBe(true)
    expect(toDec(result.accrued_rewards).eq(sum(result.lots.map((lot) => lot.accrued_rewards)))).toBe(true)
  })

  test.prop([arbBalance, fc.bigInt({ min: E / 2n, max: 2n * E }), fc.bigInt({ min: E / 2n, max: 2n * E })], {
    numRuns: runs(300),
  })(
    'property: accrued is balance x (end - start) when exact at 18 digits, and within 1e-18 otherwise',
    (b, s, e) => {
      const [lot] = computeLots([
        {
          balance: b,
          from: 'x',
          to: 'y',
          start_conversion_rate: formatUnits18(s),
          end_conversion_rate: formatUnits18(e),
        },
      ]).lots
      const exact = toDec(b).mul(toDec(formatUnits18(e)).minus(formatUnits18(s)))
      const accrued = toDec(lot?.accrued_rewards as string)
      if (exact.decimalPlaces() <= 18) expect(accrued.eq(exact)).toBe(true)
      expect(accrued.minus(exact).abs().lt('1e-18')).toBe(true)
    },
  )
})

describe('resolveLotRates', () => {
  test('behavior: takes the last report on or before each date; to defaults to the latest report', () => {
    expect(rateOnOrBefore(REPORTS, '2026-05-03')?.conversion_rate).toBe('1.02')
    expect(rateOnOrBefore(REPORTS, '2026-04-30')).toBeUndefined()
    const [lot] = resolveLotRates(REPORTS, [{ balance: '2', from: '2026-05-03' }])
    expect(lot).toEqual({
      balance: '2',
      from: '2026-05-03',
      to: '2026-05-04',
      start_conversion_rate: '1.02',
      end_conversion_rate: '1.04',
    })
    expect(
      computeLotRewards(REPORTS, [{ balance: '2', from: '2026-05-01', to: '2026-05-01' }]).accrued_rewards,
    ).toBe('0')
    expect(computeLotRewards(REPORTS, [{ balance: '2', from: '2026-05-01' }]).accrued_rewards).toBe('0.06')
  })

  test('behavior: inverted ranges and dates outside the reports are 400-class range errors', () => {
    const code = (lot: { balance: string; from: string; to?: string }, reports = REPORTS) => {
      try {
        resolveLotRates(reports, [lot])
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInputError)
        return (error as ReportRangeError).code
      }
      return 'none'
    }
    expect(code({ balance: '1', from: '2026-05-03', to: '2026-05-02' })).toBe('LOT_RANGE_INVERTED')
    expect(code({ balance: '1', from: '2026-04-30', to: '2026-05-02' })).toBe('DATE_BEFORE_FIRST_REPORT')
    expect(code({ balance: '1', from: '2026-05-01', to: '2026-05-05' })).toBe('DATE_AFTER_LATEST_REPORT')
    expect(code({ balance: '1', from: '2026-13-01' })).toBe('INVALID_DATE')
    expect(code({ balance: '1', from: '2026-05-01' }, [])).toBe('NO_REPORTS')
    expect(code({ balance: '1', from: '2026-05-01' }, [...REPORTS].reverse())).toBe('INVALID_INPUT')
  })

  test.prop([arbRange, arbBalance], { numRuns: runs(300) })(
    'property: splitting a lot date range in two gives exactly the same accrued rewards',
    ({ reports, from, mid, to }, balance) => {
      const whole = computeLotRewards(reports, [{ balance, from, to }])
      const halves = computeLotRewards(reports, [
        { balance, from, to: mid },
        { balance, from: mid, to },
      ])
      expect(toDec(halves.accrued_rewards).eq(whole.accrued_rewards)).toBe(true)
    },
  )
})
