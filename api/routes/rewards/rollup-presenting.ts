import { Type } from 'typebox'
import { groupBy } from '../../../common/group.ts'
import type { Price } from '../../../db/repos/index.ts'
import type { AccountRecordRow, ReportDay, WalletRecordRow } from '../../../db/repos/reports.ts'
import {
  type PriceAnswer,
  periodFields,
  presentRolledPeriod,
  type RolledPeriod,
  type RollupDay,
  storedRollupDays,
} from '../../../engine/index.ts'
import type { Currency } from '../../fiat-view.ts'
import type { RecordVersion, Unit } from '../../record-fields.ts'
import { Nullable } from '../../schemas.ts'
import { WITHHELD_FROM_OTHERS } from '../../wallet-presentation.ts'
import type { Fiat } from './presenting.ts'

/**
 * How the summaries show a rolled period (engine/rollup.ts): engine/period-presenting.ts (pure, shared with
 * the exports of jobs/exports/), with what only a reader of the API has: the fields withheld from a reader
 * the wallet does not belong to.
 */
export { PERIOD_HEAD_FIELDS, periodFields, periodHead, periodHeadCells } from '../../../engine/index.ts'

/** Whether a served name is withheld from a reader the wallet does not belong to (by the field it shows). */
function isWithheld(name: string): boolean {
  const field = name.replace(/^opening_/, '').replace(/_(usd|eur)$/, '_eth')
  return WITHHELD_FROM_OTHERS.has(field) || WITHHELD_FROM_OTHERS.has(field.replace(/_eth$/, '_lseth'))
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
  const out = presentRolledPeriod(period, version, unit, currency)
  if (!own) for (const name of Object.keys(out)) if (isWithheld(name)) out[name] = null
  return out
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

/**
 * Rollup days of one wallet or group from its stored records (`rows`: wallet or account records of `reports`,
 * the report before the range included, summed by report for a group; engine `storedRollupDays`): each
 * report's facts from a wallet record of it (every wallet of a report has the same), the rates its wallets
 * (`wallets`: the group's wallet records) all state and the balances of its record of the report before
 * (none: 0). `reports` are the read's reports, the report before the range first when there is one: only the
 * days of the range (`inRange`) are returned.
 */
export function rollupDays(
  rows: readonly (AccountRecordRow | WalletRecordRow)[],
  wallets: readonly WalletRecordRow[],
  reports: readonly ReportDay[],
  inRange: readonly ReportDay[],
  prices: ReturnType<typeof rollupPrices>,
): RollupDay[] {
  const factsOf = new Map(wallets.map((w) => [w.report_epoch, w]))
  const walletsOn = groupBy(wallets, (w) => w.report_epoch)
  return storedRollupDays({
    rows,
    reports,
    inRange: new Set(inRange.map((d) => d.report_epoch)),
    factsOf: (epoch) => factsOf.get(epoch),
    walletsOf: (epoch) => walletsOn.get(epoch) ?? [],
    pricesOf: prices,
  })
}
