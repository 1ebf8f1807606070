import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { CUMULATIVE_FIELDS } from '../fields/record-fields.ts'
import { runs } from '../fixtures/property-runs.ts'
import { arbRollupHistory } from '../fixtures/rollup-histories.ts'
import { zeroWalletAmounts } from './account-record.ts'
import { InvalidInputError } from './errors.ts'
import { isOtherModelField } from './fee-model-fields.ts'
import { fiatValue } from './fiat.ts'
import { RATE_NUMERATORS } from './field-kinds.ts'
import { calendarDays, calendarPeriod, GRANULARITIES } from './periods.ts'
import {
  dayFeeBearing,
  partCounted,
  type RolledPeriod,
  type RollupDay,
  rollPeriod,
  rollRange,
  rollUp,
} from './rollup.ts'
import { parseFraction, parseUnits } from './units.ts'

/** Fiat units (10^-8) of a day's value, as the daily record shows it (fiatValue). */
const units = (wei: bigint, price: { answer: bigint; decimals: number }) =>
  parseUnits(fiatValue(wei, price.answer, price.decimals), 8)

/** Stated rates the oracle counted at their rate (the properties must reach that path). */
let statedCounted = 0

/**
 * The stock/flow rule applied to a period's daily records, written out field by field without the
 * engine's rollup (its oracle): every field of the period must equal it.
 */
function checkPeriod(p: RolledPeriod, days: readonly RollupDay[]) {
  const first = days[0] as RollupDay
  const last = days[days.length - 1] as RollupDay
  expect(p.days).toBe(days.length)
  // flows: summed
  for (const [period, total] of CUMULATIVE_FIELDS) {
    expect(p.flows[period]).toBe(days.reduce((s, d) => s + d.amounts[period], 0n))
    // stocks: the running total at the close of the last day, and at the close of the report before
    expect(p.closing.totals[total]).toBe(last.amounts[total])
    expect(p.opening.totals[total]).toBe(first.amounts[total] - first.amounts[period])
    // the running totals' change over the period is its flow (no gap in a running sum)
    expect(p.closing.totals[total] - p.opening.totals[total]).toBe(p.flows[period])
  }
  expect(p.closing.balance_lseth).toBe(last.amounts.balance_lseth)
  expect(p.closing.balance_eth).toBe(last.amounts.balance_eth)
  expect(p.closing.conversion_rate).toBe(last.conversion_rate)
  expect(p.opening.conversion_rate).toBe(first.previous_conversion_rate)
  // opening balances: the previous report's record (transfers move a balance: not derivable from the day)
  expect(p.opening.balance_lseth).toBe(first.opening_balance_lseth)
  expect(p.opening.balance_eth).toBe(first.opening_balance_eth)
  // rates: the truncation of (summed part / summed fee-bearing rewards) over the days of the part's model; a
  // day whose stated rate explains its part (positive base, |rate x base - wei| <= rate x base / 10^9 + 1000
  // wei) counts rate x base instead. All over one denominator D: the product of the distinct fee-bearing
  // denominators times 10^60 (a stated rate's is a power of ten below it).
  for (const [field, part] of Object.entries(RATE_NUMERATORS)) {
    const applying = days.filter((d) => !isOtherModelField(field, d.fee_model))
    const dens = applying.map((d) => dayFeeBearing(d.amounts, d.gross_protocol_fee_rate).den)
    const D = [...new Set(dens)].reduce((a, b) => a * b, 10n ** 60n)
    const over = (x: { num: bigint; den: bigint }) => x.num * (D / x.den)
    const value = p.rates[field as keyof typeof RATE_NUMERATORS]
    if (applying.length === 0) {
      expect(value).toBeNull()
      continue
    }
    let baseNum = 0n
    let sum = 0n
    for (const d of applying) {
      const base = dayFeeBearing(d.amounts, d.gross_protocol_fee_rate)
      baseNum += over(base)
      const wei = d.amounts[part as 'fees_eth'] * D
      const stated = d.rates?.[field as keyof typeof RATE_NUMERATORS]
      if (stated === undefined || base.num <= 0n) {
        sum += wei
        continue
      }
      const r = parseFraction(stated)
      expect((r.num * over(base)) % r.den).toBe(0n)
      const at = (r.num * over(base)) / r.den
      const gap = at > wei ? at - wei : wei - at
      const explains = gap <= at / 10n ** 9n + 1000n * D
      sum += explains ? at : wei
      if (explains) statedCounted++
    }
    if (baseNum <= 0n) {
      expect(value).toBe('0')
      continue
    }
    const r = parseFraction(value as string)
    // r <= sum / base < r + 10^-18 (ROUND_DOWN toward zero)
    expect(r.num * baseNum <= sum * r.den).toBe(true)
    expect((r.num * 10n ** 18n) / r.den + 1n > (sum * 10n ** 18n) / baseNum).toBe(true)
  }
  // fiat: a flow's value is the sum of its days' (each at its own price), a balance's at that date's price
  if (first.price === undefined) {
    expect(p.fiat).toBeUndefined()
    return
  }
  const fiat = p.fiat as NonNullable<RolledPeriod['fiat']>
  for (const [period] of CUMULATIVE_FIELDS) {
    if (!period.endsWith('_eth')) continue
    const priced = days.every((d) => d.price)
    const expected = priced ? days.reduce((s, d) => s + units(d.amounts[period], d.price as never), 0n) : null
    expect(fiat.flows[period]).toBe(expected)
  }
  expect(fiat.closing_balance).toBe(last.price ? units(last.amounts.balance_eth, last.price) : null)
  expect(fiat.opening_balance).toBe(
    first.opening_price ? units(p.opening.balance_eth, first.opening_price) : null,
  )
}

describe('rollUp', () => {
  test.prop([arbRollupHistory(true), fc.constantFrom(...GRANULARITIES)], { numRuns: runs(150) })(
    'property: every field of every period is the stock/flow rule over its daily records (priced)',
    ({ days, from, to }, by) => {
      const periods = rollUp(days, from, to, by)
      const inRange = days.filter((d) => d.date >= from && d.date <= to)
      // every day of the range in exactly one period, in order, each period's days of its calendar period
      expect(periods.reduce((s, p) => s + p.days, 0)).toBe(inRange.length)
      let at = 0
      for (const p of periods) {
        const own = inRange.slice(at, at + p.days)
        at += p.days
        const cal = calendarPeriod((own[0] as RollupDay).date, by)
        expect(p.period).toBe(cal.period)
        for (const d of own) expect(calendarPeriod(d.date, by).period).toBe(p.period)
        expect(p.from).toBe([cal.first, from].sort()[1])
        expect(p.to).toBe([cal.last, to].sort()[0])
        const cut = p.from !== cal.first || p.to !== cal.last
        expect(p.partial).toBe(cut || own.length < calendarDays(p.from, p.to))
        checkPeriod(p, own)
      }
    },
  )

  test.prop([arbRollupHistory(false)], { numRuns: runs(100) })(
    'property: the whole range (a summary’s totals) is the rule over every day, unpriced',
    ({ days: all, from, to }) => {
      const days = all.filter((d) => d.date >= from && d.date <= to)
      if (days.length === 0) return
      const range = rollRange(days, from, to)
      checkPeriod(range, days)
      // and the months of the range add up to it: flows sum, stocks chain
      const months = rollUp(days, from, to, 'month')
      for (const [period] of CUMULATIVE_FIELDS) {
        expect(months.reduce((s, m) => s + m.flows[period], 0n)).toBe(range.flows[period])
      }
      expect(months.at(-1)?.closing).toEqual(range.closing)
      expect(months[0]?.opening).toEqual(range.opening)
    },
  )

  test('behavior: the closing balance in fiat is balance x the closing price, not the sum of the days', () => {
    // 411.09 LsETH at a rate of 1.05 (431.6445 ETH) on each of three days, ETH at $4,015.56 on the last
    const day = (date: string, answer: bigint): RollupDay => {
      const amounts = zeroWalletAmounts()
      amounts.balance_lseth = 411_090_000_000_000_000_000n
      amounts.balance_eth = 431_644_500_000_000_000_000n
      return {
        date,
        fee_model: 'v3',
        amounts,
        opening_balance_lseth: amounts.balance_lseth,
        opening_balance_eth: amounts.balance_eth,
        conversion_rate: '1.05',
        previous_conversion_rate: '1.05',
        gross_protocol_fee_rate: '0.15',
        price: { answer, decimals: 8 },
        opening_price: { answer: 390_000_000_000n, decimals: 8 },
      }
    }
    const p = rollPeriod('range', '2026-06-28', '2026-06-30', [
      day('2026-06-28', 390_000_000_000n),
      day('2026-06-29', 400_000_000_000n),
      day('2026-06-30', 401_556_000_000n),
    ])
    // by hand: 431.6445 ETH x $4,015.56 = $1,733,294.38842 (the days' sum would be about three times it)
    expect(p.fiat?.closing_balance).toBe(173_329_438_842_000n)
    // opening: 411.09 LsETH x 1.05 at $3,900 = 1,683,413.55
    expect(p.fiat?.opening_balance).toBe(168_341_355_000_000n)
  })

  test('behavior: days that each charged 0.15 on wei floored by the chain roll up to 0.15, not 0.149999999999999999', () => {
    const day = (date: string, gross: bigint): RollupDay => {
      const amounts = zeroWalletAmounts()
      amounts.gross_rewards_eth = gross
      // the mint floors: each day's fee is a wei or two short of 0.15 x gross
      amounts.fees_eth = (gross * 15n) / 100n - 1n
      amounts.platform_fees_eth = amounts.fees_eth / 3n
      return {
        date,
        fee_model: 'v3',
        amounts,
        opening_balance_lseth: 0n,
        opening_balance_eth: 0n,
        conversion_rate: '1.05',
        previous_conversion_rate: '1.05',
        gross_protocol_fee_rate: '0.15',
      }
    }
    const days = [
      day('2026-06-28', 1_000_000_000_000_000_007n),
      day('2026-06-29', 2_000_000_000_000_000_013n),
    ]
    expect(rollPeriod('range', '2026-06-28', '2026-06-29', days).rates.gross_protocol_fee_rate).toBe(
      '0.149999999999999999',
    )
    const stated = days.map((d) => ({
      ...d,
      rates: { gross_protocol_fee_rate: '0.15', period_platform_fees_rate: '0.05' },
    }))
    const rates = rollPeriod('range', '2026-06-28', '2026-06-29', stated).rates
    expect(rates.gross_protocol_fee_rate).toBe('0.15')
    expect(rates.period_platform_fees_rate).toBe('0.05')
  })

  test('behavior: the properties above counted days at their stated rates (the path is reached)', () => {
    expect(statedCounted).toBeGreaterThan(0)
  })

  test('behavior: a stated rate that does not explain its part (a measured legacy fee) counts the wei', () => {
    const base = { num: 1_000_000_000_000_000_000n, den: 1n }
    // 0.15 x 1 ETH, as 15 x 10^18 / 100: a wei short of it is explained
    expect(partCounted(149_999_999_999_999_999n, '0.15', base)).toEqual({ num: 15n * 10n ** 18n, den: 100n })
    expect(partCounted(57_090_917_079_861_867n, '0.1', base)).toEqual({
      num: 57_090_917_079_861_867n,
      den: 1n,
    })
    // no positive fee-bearing rewards: the wei
    expect(partCounted(0n, '0.15', { num: -5n, den: 1n })).toEqual({ num: 0n, den: 1n })
  })

  test('behavior: an empty period is refused', () => {
    expect(() => rollPeriod('2026-04', '2026-04-01', '2026-04-30', [])).toThrow(InvalidInputError)
  })
})
