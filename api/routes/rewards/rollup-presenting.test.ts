import { fc, test } from '@fast-check/vitest'
import DecimalJs from 'decimal.js'
import { describe, expect } from 'vitest'
import {
  fiatValue,
  formatPrice,
  formatUnits18,
  GRANULARITIES,
  isOtherModelField,
  kindOf,
  type RollupDay,
  rollRange,
  rollUp,
} from '../../../engine/index.ts'
import { runs } from '../../../fixtures/property-runs.ts'
import { arbRollupHistory } from '../../../fixtures/rollup-histories.ts'
import type { Currency } from '../../fiat-view.ts'
import { type RecordVersion, recordFields, type Unit } from '../../record-fields.ts'
import { WITHHELD_FROM_OTHERS } from '../../wallet-presentation.ts'
import { periodFields, presentPeriod } from './rollup-presenting.ts'

/** Exact enough for every product here (18 + 18 places of wei x rate). */
const Decimal = DecimalJs.clone({ precision: 120 })

const VIEWS: [RecordVersion, Unit][] = [
  ['v1', 'lseth'],
  ['v0', 'lseth'],
  ['v0', 'eth'],
]

/** The ETH amount a served fiat name values (`mints_usd` -> `mints_eth`). */
const ethOf = (name: string, currency: Currency) => name.replace(new RegExp(`_${currency}$`), '_eth')

/**
 * Every served field of a period in a view and currency, by the stock/flow rule over the daily records,
 * written out from the names alone (not by the presenter's own tables).
 */
function expectedField(
  name: string,
  days: readonly RollupDay[],
  version: RecordVersion,
  unit: Unit,
  currency: Currency | undefined,
): string | null {
  const first = days[0] as RollupDay
  const last = days[days.length - 1] as RollupDay
  const models = new Set(days.map((d) => d.fee_model))
  const absent = (f: string) => [...models].every((m) => isOtherModelField(f, m))
  const amount = (d: RollupDay, f: string) => d.amounts[f as 'rewards_eth']
  if (name === 'conversion_rate') return last.conversion_rate
  if (name === 'opening_conversion_rate') return first.previous_conversion_rate
  if (currency !== undefined) {
    const fiat = (wei: bigint, p: { answer: bigint; decimals: number } | null | undefined) =>
      p ? fiatValue(wei, p.answer, p.decimals) : null
    if (name === `price_${currency}`)
      return last.price ? formatPrice(last.price.answer, last.price.decimals) : null
    if (name === `opening_price_${currency}`) {
      return first.opening_price
        ? formatPrice(first.opening_price.answer, first.opening_price.decimals)
        : null
    }
    if (name === `balance_${currency}`) return fiat(last.amounts.balance_eth, last.price)
    if (name === `opening_balance_${currency}`) return fiat(first.opening_balance_eth, first.opening_price)
    if (name.endsWith(`_${currency}`)) {
      const field = ethOf(name, currency)
      if (absent(field)) return null
      if (days.some((d) => !d.price)) return null
      const sum = days.reduce((s, d) => s.plus(fiat(amount(d, field), d.price) as string), new Decimal(0))
      return sum.toFixed()
    }
  }
  if (name.startsWith('opening_')) {
    const field = name.slice('opening_'.length)
    if (field.startsWith('total_')) {
      const period = field.replace(/^total_/, '')
      const flow =
        period === 'lc_fees_lseth' || period === 'tech_provider_fees_lseth' ? `period_${period}` : period
      return formatUnits18(amount(first, field) - amount(first, flow))
    }
    if (field === 'balance_lseth') return formatUnits18(first.opening_balance_lseth)
    expect(field).toBe('balance_eth')
    return formatUnits18(first.opening_balance_eth)
  }
  expect(recordFields(version, unit)).toContain(name)
  if (name.startsWith('total_') || name.startsWith('balance_')) return formatUnits18(amount(last, name))
  if (kindOf(name) === 'rate') return rollRange(days, first.date, last.date).rates[name as 'discount_rate']
  return absent(name) ? null : formatUnits18(days.reduce((s, d) => s + amount(d, name), 0n))
}

describe('presentPeriod', () => {
  test.prop([arbRollupHistory(true), fc.constantFrom(...GRANULARITIES), fc.boolean()], {
    numRuns: runs(60),
  })(
    'property: every field in every version, unit and currency is the stock/flow rule over the days',
    ({ days, from, to }, by, own) => {
      for (const [version, unit] of VIEWS) {
        for (const currency of [undefined, 'usd', 'eur'] as const) {
          const fields = periodFields(version, unit, currency)
          expect(new Set(fields).size).toBe(fields.length)
          let at = 0
          const inRange = days.filter((d) => d.date >= from && d.date <= to)
          for (const period of rollUp(days, from, to, by)) {
            const ownDays = inRange.slice(at, at + period.days)
            at += period.days
            const shown = presentPeriod(period, version, unit, currency, own)
            expect(Object.keys(shown).sort()).toEqual([...fields].sort())
            for (const name of fields) {
              if (!own && isWithheldName(name)) {
                expect(shown[name], name).toBeNull()
                continue
              }
              expect(shown[name], `${version} ${unit} ${currency} ${period.period} ${name}`).toBe(
                expectedField(name, ownDays, version, unit, currency),
              )
            }
          }
        }
      }
    },
  )
})

/** A served name whose field (an LsETH twin, or its fiat value) is withheld from others. */
function isWithheldName(name: string): boolean {
  const base = name.replace(/^opening_/, '').replace(/_(usd|eur)$/, '_eth')
  return WITHHELD_FROM_OTHERS.has(base) || WITHHELD_FROM_OTHERS.has(base.replace(/_eth$/, '_lseth'))
}
