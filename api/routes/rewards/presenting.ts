import type { Price } from '../../../db/repos/index.ts'
import type { ReportDay, WalletRecordRow } from '../../../db/repos/reports.ts'
import type { FeeModel, WalletAmountField, WalletAmounts } from '../../../engine/index.ts'
import { type Currency, fieldsWithFiat, withFiat } from '../../fiat-view.ts'
import {
  type PresentedWalletRecord,
  presentTotals,
  type RecordVersion,
  recordFields,
  type Unit,
  WALLET_AMOUNTS,
} from '../../record-fields.ts'
import { dataAsOfDays } from '../../reporting/etag.ts'
import { withheld } from '../../wallet-presentation.ts'

/** How the reward reads show what they read: fiat values, CSV headers, totals and a summary's coverage. */

/** A read's currency and the price of each of its reports. */
export type Fiat = { currency: Currency; priceOf: (epoch: string) => Price }

/** A presented wallet record with its fiat values when the read asks for a currency. */
export function walletInFiat(
  fiat: Fiat | undefined,
  row: WalletRecordRow,
  presented: Readonly<PresentedWalletRecord>,
) {
  if (!fiat) return presented
  const price = fiat.priceOf(row.report_epoch)
  return withFiat(presented, (s) => BigInt(row[s as WalletAmountField]), WALLET_AMOUNTS, price, fiat.currency)
}

/** An account's presented totals of one report with their fiat values when the read asks for a currency. */
export function totalsInFiat(
  fiat: Fiat | undefined,
  epoch: string,
  amounts: WalletAmounts,
  totals: Record<string, string | null>,
) {
  if (!fiat) return totals
  const price = fiat.priceOf(epoch)
  return withFiat(totals, (s) => amounts[s as WalletAmountField], WALLET_AMOUNTS, price, fiat.currency)
}

/** The CSV header of wallet records of a version, unit and currency. */
export function csvFields(version: RecordVersion, unit: Unit, fiat: Fiat | undefined): readonly string[] {
  return fieldsWithFiat(recordFields(version, unit), WALLET_AMOUNTS, fiat?.currency)
}

/** Summed amounts as a read's totals; `own` false: the fields withheld from a reader are null. */
export function totalsOf(
  amounts: WalletAmounts,
  version: RecordVersion,
  unit: Unit,
  models: ReadonlySet<FeeModel>,
  own = true,
): Record<string, string | null> {
  const totals = presentTotals(amounts, version, unit, models)
  return own ? totals : withheld(totals)
}

/**
 * A summary's `from` / `to` (the dates of the first and last reports covered), the range asked for, the
 * fee models of its days and its data_as_of.
 */
export function coverage(
  days: readonly ReportDay[],
  from: string,
  to: string,
  models: ReadonlySet<FeeModel>,
) {
  return {
    from: (days[0] as ReportDay).date,
    to: (days[days.length - 1] as ReportDay).date,
    requested: { from, to },
    fee_models: [...models].sort(),
    data_as_of: dataAsOfDays(days),
  }
}
