import { CUMULATIVE_FIELDS, type PeriodField, type TotalField } from '../fields/record-fields.ts'
import type { WalletAmounts } from './account-record.ts'
import { InvalidInputError } from './errors.ts'
import { isOtherModelField } from './fee-model-fields.ts'
import type { FeeModel } from './fee-schedule.ts'
import { FIAT_DECIMALS, fiatValue } from './fiat.ts'
import { RATE_NUMERATORS, type RateField } from './field-kinds.ts'
import { calendarDays, calendarPeriod, type Granularity } from './periods.ts'
import { type Fraction, formatRatio, parseFraction, parseUnits } from './units.ts'

/**
 * Rollups of daily reward amounts (a wallet's, an account's or an organization's) into periods, by the
 * stock/flow rule of field-kinds.ts: flows summed; stocks at the period's opening and closing; rates
 * derived from the period's summed amounts; fiat of a flow the sum of each day's value at its own price,
 * fiat of a stock its value at that date's price. Exact bigint, one rounding per named place.
 */

/** A price per ETH: `answer` / 10^`decimals`. */
export interface PriceAnswer {
  answer: bigint
  decimals: number
}

/** One report's amounts of a wallet or a group of wallets (oldest first in a rollup). */
export interface RollupDay {
  date: string
  fee_model: FeeModel
  /** The day's record amounts (a group: the sums of its wallets' amounts). */
  amounts: WalletAmounts
  /**
   * The balances at the close of the report before this one (that report's record; 0 when it has none: the
   * wallet held nothing). Not derivable from the day's own record: LsETH transfers move a balance too.
   */
  opening_balance_lseth: bigint
  opening_balance_eth: bigint
  conversion_rate: string
  previous_conversion_rate: string
  /** g of the report (every wallet of a report has the same). */
  gross_protocol_fee_rate: string
  /**
   * The day's served rate of a part, where every wallet of the day has the same one (a wallet's own record; an
   * account whose wallets share their rates). Where it explains the day's part (`RATE_TOLERANCE`), the period
   * counts the part at that rate (rate x the day's fee-bearing rewards), so a period whose days all charged
   * 0.035 says 0.035, not the floored wei's 0.034999999999999999; any other part counts its summed wei.
   */
  rates?: Partial<Record<RateField, string>>
  /** The report's price in the read's currency (null: missing); undefined: no fiat asked. */
  price?: PriceAnswer | null
  /** The price of the report before this one (null: missing or none). */
  opening_price?: PriceAnswer | null
}

/** Stocks at a date: balances, running totals and the conversion rate. */
export interface StockValues {
  balance_lseth: bigint
  balance_eth: bigint
  conversion_rate: string
  totals: Record<TotalField, bigint>
}

/** Fiat values (units of 10^-8) of a period; null where a price is missing. */
export interface PeriodFiat {
  /** Each `*_eth` flow: the sum of its days' values, each at its own day's price. */
  flows: Partial<Record<PeriodField, bigint | null>>
  /** The opening balance_eth at the price of the report before the period. */
  opening_balance: bigint | null
  /** The closing balance_eth at the closing report's price. */
  closing_balance: bigint | null
  opening_price: PriceAnswer | null
  closing_price: PriceAnswer | null
}

/** A period of a rollup. */
export interface RolledPeriod {
  /** `2026-04-30`, `2026-04`, `2026-Q2`, `2026`, or `range` (the whole range). */
  period: string
  /** The period's first and last calendar dates within the range asked for. */
  from: string
  to: string
  /** The number of reports in it. */
  days: number
  /** Cut by the range asked for, or with fewer reports than calendar days. */
  partial: boolean
  fee_models: FeeModel[]
  flows: Record<PeriodField, bigint>
  opening: StockValues
  closing: StockValues
  /** Each rate = its summed part / the summed fee-bearing rewards; null when no day's model has the part. */
  rates: Record<RateField, string | null>
  /** Present when the days carry prices. */
  fiat?: PeriodFiat
}

const PERIOD_FIELDS: readonly PeriodField[] = CUMULATIVE_FIELDS.map(([p]) => p)
const ETH_FLOWS: readonly PeriodField[] = PERIOD_FIELDS.filter((f) => f.endsWith('_eth'))

/**
 * A day's fee-bearing rewards (fee-base.ts, docs/interface.md "A fee charged on a day the pool lost"), as
 * an exact fraction of wei: its gross rewards, or fees / g when its fee exceeds g x its gross rewards.
 */
export function dayFeeBearing(
  amounts: Pick<WalletAmounts, 'gross_rewards_eth' | 'fees_eth'>,
  g: string,
): Fraction {
  const rate = parseFraction(g, 'gross_protocol_fee_rate')
  const fees = amounts.fees_eth
  if (fees > 0n && rate.num > 0n && fees * rate.den > rate.num * amounts.gross_rewards_eth) {
    return { num: fees * rate.den, den: rate.num }
  }
  return { num: amounts.gross_rewards_eth, den: 1n }
}

/** a + b over their least common denominator (the engine's denominators are powers of ten: it stays small). */
function addFraction(a: Fraction, b: Fraction): Fraction {
  if (a.den === b.den) return { num: a.num + b.num, den: a.den }
  const den = (a.den / gcd(a.den, b.den)) * b.den
  return { num: a.num * (den / a.den) + b.num * (den / b.den), den }
}

function gcd(a: bigint, b: bigint): bigint {
  let [x, y] = [a < 0n ? -a : a, b < 0n ? -b : b]
  while (y !== 0n) [x, y] = [y, x % y]
  return x
}

/**
 * The rates a group of wallets' records of one day state together (`RollupDay.rates`): each rate every wallet
 * serves alike.
 */
export function statedRates(
  wallets: readonly Readonly<Record<RateField, string>>[],
): Partial<Record<RateField, string>> {
  const out: Partial<Record<RateField, string>> = {}
  const first = wallets[0]
  if (first === undefined) return out
  for (const rate of Object.keys(RATE_NUMERATORS) as RateField[]) {
    if (wallets.every((w) => w[rate] === first[rate])) out[rate] = first[rate]
  }
  return out
}

/** Fiat units (10^-8) of wei at a price: `fiatValue`, rounded once half-even to 8 places. */
function fiatUnits(wei: bigint, price: PriceAnswer): bigint {
  return parseUnits(fiatValue(wei, price.answer, price.decimals), FIAT_DECIMALS)
}

/** The stocks at the close of a day. */
function closingOf(day: RollupDay): StockValues {
  const totals = {} as Record<TotalField, bigint>
  for (const [, total] of CUMULATIVE_FIELDS) totals[total] = day.amounts[total]
  return {
    balance_lseth: day.amounts.balance_lseth,
    balance_eth: day.amounts.balance_eth,
    conversion_rate: day.conversion_rate,
    totals,
  }
}

/**
 * The stocks at the opening of a day (the close of the report before it): the balances of that report's
 * record, each running total less the day's amount (total_X - X: exact, a running sum has no gap) and the
 * previous conversion rate.
 */
function openingOf(day: RollupDay): StockValues {
  const a = day.amounts
  const totals = {} as Record<TotalField, bigint>
  for (const [period, total] of CUMULATIVE_FIELDS) totals[total] = a[total] - a[period]
  return {
    balance_lseth: day.opening_balance_lseth,
    balance_eth: day.opening_balance_eth,
    conversion_rate: day.previous_conversion_rate,
    totals,
  }
}

/**
 * How far a part's wei may be from rate x fee-bearing rewards for the rate to explain it: one part in 10^9 of
 * the product plus 1,000 wei (the mint's floor and each transfer's rounding are a few wei; a measured legacy
 * fee that is not g x gross is off by percents).
 */
export const RATE_TOLERANCE = { parts: 10n ** 9n, wei: 1_000n } as const

/**
 * Each rate of a run of days: its part over the fee-bearing rewards, both summed over the days it applies to.
 * A day whose stated rate explains its part (positive fee-bearing rewards, within `RATE_TOLERANCE`) counts the
 * part at that rate, so the period's rate is exactly the rate its days charged when they all charged one; any
 * other day counts the part's wei.
 */
function ratesOf(days: readonly RollupDay[]): Record<RateField, string | null> {
  const out = {} as Record<RateField, string | null>
  const bases = days.map((d) => dayFeeBearing(d.amounts, d.gross_protocol_fee_rate))
  for (const [rate, part] of Object.entries(RATE_NUMERATORS) as [RateField, PeriodField][]) {
    let sum: Fraction = { num: 0n, den: 1n }
    let base: Fraction = { num: 0n, den: 1n }
    let applies = false
    days.forEach((day, i) => {
      if (isOtherModelField(rate, day.fee_model)) return
      applies = true
      const dayBase = bases[i] as Fraction
      sum = addFraction(sum, partCounted(day.amounts[part], day.rates?.[rate], dayBase))
      base = addFraction(base, dayBase)
    })
    // rounding: ROUND_DOWN at 18 places, as every served rate; '0' when the base is <= 0 (fee-totals.ts)
    out[rate] = !applies ? null : base.num > 0n ? formatRatio(sum.num * base.den, sum.den * base.num) : '0'
  }
  return out
}

/**
 * A day's part as a period's rate counts it: at its stated rate (rate x fee-bearing rewards) when that explains
 * the part's wei within `RATE_TOLERANCE`, else the wei.
 */
export function partCounted(wei: bigint, stated: string | undefined, base: Fraction): Fraction {
  if (stated === undefined || base.num <= 0n) return { num: wei, den: 1n }
  const r = parseFraction(stated, 'rate')
  const at = { num: r.num * base.num, den: r.den * base.den }
  const gap = at.num - wei * at.den
  const allowed = at.num / RATE_TOLERANCE.parts + RATE_TOLERANCE.wei * at.den
  return (gap < 0n ? -gap : gap) <= allowed ? at : { num: wei, den: 1n }
}

/** The fiat values of a run of days (every day carries `price`). */
function fiatOf(days: readonly RollupDay[], opening: StockValues, closing: StockValues): PeriodFiat {
  const first = days[0] as RollupDay
  const last = days[days.length - 1] as RollupDay
  const flows: Partial<Record<PeriodField, bigint | null>> = {}
  for (const field of ETH_FLOWS) {
    let sum: bigint | null = 0n
    for (const day of days) {
      if (!day.price || sum === null) sum = null
      else sum += fiatUnits(day.amounts[field], day.price)
    }
    flows[field] = sum
  }
  const openingPrice = first.opening_price ?? null
  const closingPrice = last.price ?? null
  return {
    flows,
    opening_balance: openingPrice ? fiatUnits(opening.balance_eth, openingPrice) : null,
    closing_balance: closingPrice ? fiatUnits(closing.balance_eth, closingPrice) : null,
    opening_price: openingPrice,
    closing_price: closingPrice,
  }
}

/**
 * One period of consecutive days (oldest first): flows summed, stocks at its opening (the first day's
 * opening) and closing (the last day's close), rates from the summed amounts, fiat when the days are priced.
 *
 * @example
 * const p = rollPeriod('2026-04', '2026-04-01', '2026-04-30', aprilDays)
 * p.flows.rewards_eth // the sum of the days' rewards_eth
 * p.closing.balance_lseth // the last day's balance_lseth
 */
export function rollPeriod(
  period: string,
  from: string,
  to: string,
  days: readonly RollupDay[],
): RolledPeriod {
  const first = days[0]
  const last = days[days.length - 1]
  if (first === undefined || last === undefined) {
    throw new InvalidInputError('a rollup period needs at least one report', { details: { period } })
  }
  const flows = {} as Record<PeriodField, bigint>
  for (const field of PERIOD_FIELDS) flows[field] = 0n
  for (const day of days) for (const field of PERIOD_FIELDS) flows[field] += day.amounts[field]
  const opening = openingOf(first)
  const closing = closingOf(last)
  const out: RolledPeriod = {
    period,
    from,
    to,
    days: days.length,
    partial: days.length < calendarDays(from, to),
    fee_models: [...new Set(days.map((d) => d.fee_model))].sort(),
    flows,
    opening,
    closing,
    rates: ratesOf(days),
  }
  if (days.some((d) => d.price !== undefined)) out.fiat = fiatOf(days, opening, closing)
  return out
}

/**
 * Rolls daily amounts (oldest first, one per report date) of the range [from, to] up into UTC calendar
 * periods: one per period holding a report, each cut to the range; `partial` when the range cuts it or it
 * has fewer reports than calendar days.
 *
 * @example
 * rollUp(days, '2026-04-15', '2026-06-30', 'month').map((p) => [p.period, p.partial])
 * // [['2026-04', true], ['2026-05', false], ['2026-06', false]] (every day reported)
 */
export function rollUp(
  days: readonly RollupDay[],
  from: string,
  to: string,
  granularity: Granularity,
): RolledPeriod[] {
  const out: RolledPeriod[] = []
  let run: RollupDay[] = []
  let current: ReturnType<typeof calendarPeriod> | undefined
  const flush = () => {
    if (!current || run.length === 0) return
    const first = current.first < from ? from : current.first
    const last = current.last > to ? to : current.last
    const rolled = rollPeriod(current.period, first, last, run)
    if (first !== current.first || last !== current.last) rolled.partial = true
    out.push(rolled)
  }
  for (const day of days) {
    if (day.date < from || day.date > to) continue
    const of = calendarPeriod(day.date, granularity)
    if (current?.period !== of.period) {
      flush()
      current = of
      run = []
    }
    run.push(day)
  }
  flush()
  return out
}

/**
 * The whole range as one period (`period: 'range'`): a summary's totals by the same rule as its rollups.
 *
 * @example
 * rollRange(days, '2026-04-01', '2026-06-30').closing.balance_lseth // the last day's balance
 */
export function rollRange(days: readonly RollupDay[], from: string, to: string): RolledPeriod {
  return rollPeriod('range', from, to, days)
}
