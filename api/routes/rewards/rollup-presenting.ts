import { Type } from 'typebox'
import type { Price } from '../../../db/repos/index.ts'
import type { AccountRecordRow, ReportDay, WalletRecordRow } from '../../../db/repos/reports.ts'
import {
  addWalletAmounts,
  type FeeModel,
  FIAT_DECIMALS,
  formatPrice,
  formatUnits,
  formatUnits18,
  isOtherModelField,
  kindOf,
  type PriceAnswer,
  type RateField,
  type RolledPeriod,
  type RollupDay,
  zeroWalletAmounts,
} from '../../../engine/index.ts'
import type { Currency } from '../../fiat-view.ts'
import { type RecordVersion, recordFields, type Unit } from '../../record-fields.ts'
import { Nullable } from '../../schemas.ts'
import { amountsOf, WITHHELD_FROM_OTHERS } from '../../wallet-presentation.ts'
import type { Fiat } from './presenting.ts'

/**
 * How the summaries show a rolled period (engine/rollup.ts) in a record version, unit and currency: every
 * field of the view by its kind (engine/field-kinds.ts). A flow is the period's sum; a stock is its closing
 * value under the record's name (`balance_lseth`, `total_rewards_eth`, `conversion_rate`) and its opening
 * value as `opening_<name>`; a rate is derived from the period's sums. With a currency: a flow's fiat is the
 * sum of its days' values, the balance's its closing value at the closing report's price
 * (`balance_<currency>`) and its opening value at the price of the report before the period
 * (`opening_balance_<currency>`), with both prices (`price_<currency>`, `opening_price_<currency>`).
 */

/** The fiat name of a field's ETH amount, if it has one (`mints_lseth` -> `mints_usd`; totals: none). */
function fiatName(field: string, currency: Currency): string | undefined {
  if (field.startsWith('total_') || kindOf(field) === 'rate' || kindOf(field) === undefined) return undefined
  const eth = field.replace(/_lseth$/, '_eth')
  if (!eth.endsWith('_eth') || kindOf(eth) === undefined) return undefined
  return eth.replace(/_eth$/, `_${currency}`)
}

/** The served fields of a version and unit by kind: flows, stocks (amounts and the rate), rates. */
function viewFields(version: RecordVersion, unit: Unit) {
  const fields = recordFields(version, unit).filter((f) => f !== 'previous_conversion_rate')
  return fields.filter((f) => kindOf(f) !== 'attribute')
}

/**
 * The names of a summary's totals (and of each period's amounts) in a version, unit and currency, in order:
 * the view's fields, the opening value of each stock, then the fiat values and prices.
 *
 * @example
 * periodFields('v1', 'lseth', 'usd').includes('opening_balance_usd') // true
 */
export function periodFields(version: RecordVersion, unit: Unit, currency: Currency | undefined): string[] {
  const fields = viewFields(version, unit)
  const out = [...fields, ...fields.filter((f) => kindOf(f) === 'stock').map((f) => `opening_${f}`)]
  if (currency === undefined) return out
  const fiat = new Set<string>()
  for (const field of fields) {
    const name = fiatName(field, currency)
    if (name !== undefined) fiat.add(name)
  }
  return [...out, ...fiat, `opening_balance_${currency}`, `price_${currency}`, `opening_price_${currency}`]
}

/** Whether a served name is withheld from a reader the wallet does not belong to (by the field it shows). */
function isWithheld(name: string): boolean {
  const field = name.replace(/^opening_/, '').replace(/_(usd|eur)$/, '_eth')
  return WITHHELD_FROM_OTHERS.has(field) || WITHHELD_FROM_OTHERS.has(field.replace(/_eth$/, '_lseth'))
}

const fiatText = (units: bigint | null | undefined): string | null =>
  units === null || units === undefined ? null : formatUnits(units, FIAT_DECIMALS)
const priceText = (price: PriceAnswer | null): string | null =>
  price === null ? null : formatPrice(price.answer, price.decimals)

/** A stock's value in a set of stocks. */
function stockOf(values: RolledPeriod['opening'], field: string): string {
  if (field === 'conversion_rate') return values.conversion_rate
  if (field === 'balance_lseth' || field === 'balance_eth') return formatUnits18(values[field])
  return formatUnits18(values.totals[field as keyof RolledPeriod['opening']['totals']])
}

/**
 * A rolled period's fields in a version, unit and currency (`periodFields`' names); `own` false: the fields
 * withheld from a reader that is not the wallet's own are null.
 *
 * @example
 * presentPeriod(rollRange(days, from, to), 'v1', 'lseth', 'usd').balance_usd // closing balance x closing price
 */
export function presentPeriod(
  period: RolledPeriod,
  version: RecordVersion,
  unit: Unit,
  currency: Currency | undefined,
  own = true,
): Record<string, string | null> {
  const out: Record<string, string | null> = {}
  const models = period.fee_models as FeeModel[]
  const fields = viewFields(version, unit)
  const absent = (f: string) => models.every((m) => isOtherModelField(f, m))
  for (const field of fields) {
    const kind = kindOf(field)
    if (kind === 'rate') out[field] = period.rates[field as RateField] ?? null
    else if (kind === 'stock') out[field] = stockOf(period.closing, field)
    else out[field] = absent(field) ? null : formatUnits18(period.flows[field as keyof typeof period.flows])
  }
  for (const field of fields) {
    if (kindOf(field) === 'stock') out[`opening_${field}`] = stockOf(period.opening, field)
  }
  if (currency !== undefined) {
    const fiat = period.fiat
    for (const field of fields) {
      const name = fiatName(field, currency)
      if (name === undefined || name in out) continue
      if (field === 'balance_lseth' || field === 'balance_eth') out[name] = fiatText(fiat?.closing_balance)
      else
        out[name] = absent(field)
          ? null
          : fiatText(fiat?.flows[field.replace(/_lseth$/, '_eth') as 'rewards_eth'])
    }
    out[`opening_balance_${currency}`] = fiatText(fiat?.opening_balance)
    out[`price_${currency}`] = priceText(fiat?.closing_price ?? null)
    out[`opening_price_${currency}`] = priceText(fiat?.opening_price ?? null)
  }
  if (!own) for (const name of Object.keys(out)) if (isWithheld(name)) out[name] = null
  return out
}

/** A period's head: which period, its dates within the range, its reports, whether partial, its models. */
export function periodHead(period: RolledPeriod) {
  return {
    period: period.period,
    from: period.from,
    to: period.to,
    partial: period.partial,
    days: period.days,
    fee_models: period.fee_models,
  }
}

/** The CSV header fields of a period's head. */
export const PERIOD_HEAD_FIELDS = ['period', 'from', 'to', 'partial', 'days', 'fee_models'] as const

/** A period's head as CSV cells. */
export function periodHeadCells(period: ReturnType<typeof periodHead>): Record<string, string> {
  return {
    period: period.period,
    from: period.from,
    to: period.to,
    partial: String(period.partial),
    days: String(period.days),
    fee_models: period.fee_models.join(' '),
  }
}

/** The response schema of a period's (or a summary's totals') amounts in a version and unit. */
export function periodAmountsSchema(version: RecordVersion, unit: Unit) {
  const all = new Set([...periodFields(version, unit, 'usd'), ...periodFields(version, unit, 'eur')])
  const plain = new Set(periodFields(version, unit, undefined))
  return Object.fromEntries(
    [...all].map((f) => [f, plain.has(f) ? Nullable('string') : Type.Optional(Nullable('string'))]),
  )
}

/** A stored price as a rollup's price (null: missing). */
function answerOf(price: Price): PriceAnswer | null {
  return 'answer' in price ? { answer: price.answer, decimals: price.decimals } : null
}

/**
 * The prices of a read's reports for the rollups: each report's price and the one of the report before it
 * (`reports` oldest first, the report before the range first when there is one); nothing without fiat.
 */
export function rollupPrices(fiat: Fiat | undefined, reports: readonly ReportDay[]) {
  const byEpoch = new Map<string, Pick<RollupDay, 'price' | 'opening_price'>>()
  if (!fiat) return (_epoch: string) => ({})
  reports.forEach((day, i) => {
    const before = reports[i - 1]
    byEpoch.set(day.report_epoch, {
      price: answerOf(fiat.priceOf(day.report_epoch)),
      opening_price: before ? answerOf(fiat.priceOf(before.report_epoch)) : null,
    })
  })
  return (epoch: string) => byEpoch.get(epoch) ?? { price: null, opening_price: null }
}

/** A stored record's balances (a group's: summed), the opening balances of the report after it. */
type Balances = { lseth: bigint; eth: bigint }
const NO_BALANCE: Balances = { lseth: 0n, eth: 0n }

/**
 * Rollup days of one wallet or group from its stored records (`rows`: wallet or account records, oldest
 * first, of `reports` and possibly of the report before them, summed by report for a group), each with its
 * report's rates from a wallet record of that report (every wallet of a report has the same) and the
 * balances of its record of the report before (none: 0). `reports` are the read's reports, the report
 * before the range first when there is one: only the days of the range (all but that one) are returned.
 */
export function rollupDays(
  rows: readonly (AccountRecordRow | WalletRecordRow)[],
  wallets: readonly WalletRecordRow[],
  reports: readonly ReportDay[],
  inRange: readonly ReportDay[],
  prices: ReturnType<typeof rollupPrices>,
): RollupDay[] {
  const rateOf = new Map(wallets.map((w) => [w.report_epoch, w]))
  const sums = new Map<string, { date: string; amounts: ReturnType<typeof zeroWalletAmounts> }>()
  for (const row of rows) {
    let sum = sums.get(row.report_epoch)
    if (!sum) {
      sum = { date: row.date, amounts: zeroWalletAmounts() }
      sums.set(row.report_epoch, sum)
    }
    addWalletAmounts(sum.amounts, amountsOf(row))
  }
  const wanted = new Set(inRange.map((d) => d.report_epoch))
  const out: RollupDay[] = []
  reports.forEach((report, i) => {
    const sum = sums.get(report.report_epoch)
    const w = rateOf.get(report.report_epoch)
    if (!wanted.has(report.report_epoch) || !sum || !w) return
    const before = reports[i - 1]
    const previous = before ? sums.get(before.report_epoch) : undefined
    const opening: Balances = previous
      ? { lseth: previous.amounts.balance_lseth, eth: previous.amounts.balance_eth }
      : NO_BALANCE
    out.push({
      date: sum.date,
      fee_model: w.fee_model,
      amounts: sum.amounts,
      opening_balance_lseth: opening.lseth,
      opening_balance_eth: opening.eth,
      conversion_rate: w.conversion_rate,
      previous_conversion_rate: w.previous_conversion_rate,
      gross_protocol_fee_rate: w.gross_protocol_fee_rate,
      ...prices(report.report_epoch),
    })
  })
  return out
}
