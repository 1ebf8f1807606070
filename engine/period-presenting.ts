import { isOtherModelField } from './fee-model-fields.ts'
import type { FeeModel } from './fee-schedule.ts'
import { FIAT_DECIMALS, formatPrice } from './fiat.ts'
import { kindOf, type RateField } from './field-kinds.ts'
import { type RecordVersion, recordFields, type Unit } from './record-fields.ts'
import type { PriceAnswer, RolledPeriod } from './rollup.ts'
import { formatUnits, formatUnits18 } from './units.ts'

/**
 * How the summaries (and the records exports of jobs/exports/) show a rolled period (engine/rollup.ts) in a record version, unit and currency: every
 * field of the view by its kind (engine/field-kinds.ts). A flow is the period's sum; a stock is its closing
 * value under the record's name (`balance_lseth`, `total_rewards_eth`, `conversion_rate`) and its opening
 * value as `opening_<name>`; a rate is derived from the period's sums. With a currency: a flow's fiat is the
 * sum of its days' values, the balance's its closing value at the closing report's price
 * (`balance_<currency>`) and its opening value at the price of the report before the period
 * (`opening_balance_<currency>`), with both prices (`price_<currency>`, `opening_price_<currency>`).
 */

/** The fiat name of a field's ETH amount, if it has one (`mints_lseth` -> `mints_usd`; totals: none). */
function fiatName(field: string, currency: string): string | undefined {
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
export function periodFields(version: RecordVersion, unit: Unit, currency: string | undefined): string[] {
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
 * A rolled period's fields in a version, unit and currency (`periodFields`' names), as exact decimal strings
 * (fiat to 8 places; null: a part of a fee model none of its days has, or a missing price).
 *
 * @example
 * presentRolledPeriod(rollRange(days, from, to), 'v1', 'lseth', 'usd').balance_usd // closing balance x closing price
 */
export function presentRolledPeriod(
  period: RolledPeriod,
  version: RecordVersion,
  unit: Unit,
  currency: string | undefined,
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
