import { parseDateOnly } from './dates.ts'
import type { Dec } from './decimal.ts'
import { formatDec, ROUND_DOWN, toDec } from './decimal.ts'
import { InvalidInputError, ReportRangeError } from './errors.ts'
import { formatUnits18, parseUnits18 } from './units.ts'

/**
 * Lots (`POST /eth/v1/rewards`): rewards accrued by a balance of LsETH held from one report date to another.
 * value(b, rate) = b x rate rounded down to 18 decimals (wei); accrued = value(b, end) - value(b, start).
 * This equals b x (end - start) exactly whenever that product has at most 18 decimals (as in the public
 * example) and otherwise differs by less than 1e-18; it makes accruals telescope exactly, so splitting a
 * range in two never changes the total.
 */

/** One report's post-fee conversion rate, keyed by its UTC date. */
export interface ReportRate {
  date: string
  conversion_rate: string
}

/** A lot as requested: a balance of LsETH, from a date, to a date (default: the latest report). */
export interface LotRequest {
  balance: string
  from: string
  to?: string | undefined
}

/** A lot with its start and end rates resolved. */
export interface LotWithRates {
  balance: string
  from: string
  to: string
  start_conversion_rate: string
  end_conversion_rate: string
}

/** A computed lot. */
export interface LotResult extends LotWithRates {
  accrued_rewards: string
}

/** The response of a lots request: sums over the lots, and the lots. */
export interface LotsResult {
  balance: string
  accrued_rewards: string
  lots: LotResult[]
}

function checkReports(reports: readonly ReportRate[]): void {
  if (reports.length === 0) throw new ReportRangeError('there are no reports yet', { code: 'NO_REPORTS' })
  let previous = ''
  for (const report of reports) {
    parseDateOnly(report.date, 'report date')
    if (report.date <= previous) {
      throw new InvalidInputError('reports must be sorted by date, one per date', {
        details: { date: report.date },
      })
    }
    previous = report.date
  }
}

/**
 * The report that gives the rate of `date`: the last report on or before it (binary search over reports
 * sorted by date). Undefined when `date` is before the first report.
 *
 * @example
 * rateOnOrBefore([{ date: '2026-05-01', conversion_rate: '1.01' }, { date: '2026-05-03', conversion_rate: '1.02' }], '2026-05-02')
 * // { date: '2026-05-01', conversion_rate: '1.01' }
 */
export function rateOnOrBefore(reports: readonly ReportRate[], date: string): ReportRate | undefined {
  let low = 0
  let high = reports.length - 1
  let found: ReportRate | undefined
  while (low <= high) {
    const mid = (low + high) >> 1
    const report = reports[mid] as ReportRate
    if (report.date <= date) {
      found = report
      low = mid + 1
    } else {
      high = mid - 1
    }
  }
  return found
}

function resolveOne(reports: readonly ReportRate[], lot: LotRequest): LotWithRates {
  const first = reports[0] as ReportRate
  const latest = reports[reports.length - 1] as ReportRate
  const to = lot.to ?? latest.date
  parseDateOnly(lot.from, 'from')
  parseDateOnly(to, 'to')
  if (lot.from > to) {
    throw new ReportRangeError('from is after to', {
      code: 'LOT_RANGE_INVERTED',
      details: { from: lot.from, to },
    })
  }
  if (lot.from < first.date) {
    throw new ReportRangeError('from is before the first report', {
      code: 'DATE_BEFORE_FIRST_REPORT',
      details: { from: lot.from, first_report: first.date },
    })
  }
  if (to > latest.date) {
    throw new ReportRangeError('to is after the latest report', {
      code: 'DATE_AFTER_LATEST_REPORT',
      details: { to, latest_report: latest.date },
    })
  }
  const start = rateOnOrBefore(reports, lot.from) as ReportRate
  const end = rateOnOrBefore(reports, to) as ReportRate
  return {
    balance: lot.balance,
    from: lot.from,
    to,
    start_conversion_rate: start.conversion_rate,
    end_conversion_rate: end.conversion_rate,
  }
}

/**
 * Resolves each lot's start and end rates from the reports (sorted by date): the post-fee rate of the last
 * report on or before `from` / `to`; `to` defaults to the latest report's date. Throws `ReportRangeError`
 * (400) when from > to, from is before the first report or to after the latest, `InvalidInputError` for a
 * malformed date.
 *
 * @example
 * resolveLotRates(reports, [{ balance: '1', from: '2026-05-01' }])[0].end_conversion_rate // the latest rate
 */
export function resolveLotRates(reports: readonly ReportRate[], lots: readonly LotRequest[]): LotWithRates[] {
  checkReports(reports)
  return lots.map((lot) => resolveOne(reports, lot))
}

function parseBalance(balance: string): Dec {
  const wei = parseUnits18(balance, 'balance')
  if (wei < 0n) throw new InvalidInputError('balance must not be negative', { details: { balance } })
  return toDec(formatUnits18(wei))
}

function parseRate(rate: string, field: string): Dec {
  const value = toDec(rate, field)
  if (value.lte(0))
    throw new InvalidInputError(`${field} must be positive`, { details: { field, value: rate } })
  return value
}

function valueAt(balance: Dec, rate: Dec): Dec {
  if (balance.sd() + rate.sd() > 80) {
    throw new InvalidInputError('balance x rate needs more than 80 significant digits', { details: {} })
  }
  // exact product (fits the 80 digits checked above); rounding: ROUND_DOWN to 18 decimals (wei)
  return balance.mul(rate).toDecimalPlaces(18, ROUND_DOWN)
}

/**
 * Accrued rewards per lot and in total. accrued = floor18(b x end) - floor18(b x start); the top-level balance
 * and accrued_rewards are exact sums over the lots. Strings carry exact values, trailing zeros trimmed.
 *
 * @example
 * computeLots([
 *   { balance: '1', from: 'a', to: 'b', start_conversion_rate: '1.0014257204933798', end_conversion_rate: '1.0023467329617235' },
 *   { balance: '3', from: 'a', to: 'b', start_conversion_rate: '1.0026157619809285', end_conversion_rate: '1.0036926274900292' },
 * ]) // { balance: '4', accrued_rewards: '0.0041516089956458', lots: [... '0.0009210124683437', '0.0032305965273021'] }
 */
export function computeLots(lots: readonly LotWithRates[]): LotsResult {
  let totalBalance = toDec(0)
  let totalAccrued = toDec(0)
  const results = lots.map((lot) => {
    const balance = parseBalance(lot.balance)
    const start = parseRate(lot.start_conversion_rate, 'start_conversion_rate')
    const end = parseRate(lot.end_conversion_rate, 'end_conversion_rate')
    const accrued = valueAt(balance, end).minus(valueAt(balance, start))
    totalBalance = totalBalance.plus(balance)
    totalAccrued = totalAccrued.plus(accrued)
    return { ...lot, balance: formatDec(balance), accrued_rewards: formatDec(accrued) }
  })
  return { balance: formatDec(totalBalance), accrued_rewards: formatDec(totalAccrued), lots: results }
}

/**
 * Resolves rates and computes the lots in one call (what `POST /eth/v1/rewards` does).
 *
 * @example
 * computeLotRewards(reports, [{ balance: '3', from: '2026-05-01', to: '2026-05-08' }]).accrued_rewards
 */
export function computeLotRewards(reports: readonly ReportRate[], lots: readonly LotRequest[]): LotsResult {
  return computeLots(resolveLotRates(reports, lots))
}
