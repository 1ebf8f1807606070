import { addWalletAmounts, type WalletAmounts, zeroWalletAmounts } from './account-record.ts'
import type { FeeModel } from './fee-schedule.ts'
import type { RateField } from './field-kinds.ts'
import { type RollupDay, statedRates } from './rollup.ts'
import { WALLET_AMOUNT_FIELDS, type WalletAmountField } from './wallet-record.ts'

/**
 * Stored records (a wallet's or a group's, decimal strings of wei as Postgres prints them) made into the days
 * a rollup reads (rollup.ts): one code path for the API's summaries and the export builder.
 */

/** A stored record's amounts: decimal strings of wei (share units for LsETH). */
export type StoredAmounts = Readonly<Record<WalletAmountField, string>>

/** A stored record's amounts as bigint. */
export function storedAmounts(row: StoredAmounts): WalletAmounts {
  const out = {} as WalletAmounts
  for (const field of WALLET_AMOUNT_FIELDS) out[field] = BigInt(row[field])
  return out
}

/** What every wallet record of a report says alike: its fee model, conversion rates and g. */
export interface ReportFacts {
  fee_model: FeeModel
  conversion_rate: string
  previous_conversion_rate: string
  gross_protocol_fee_rate: string
}

/** A stored wallet record's served rates (as `statedRates` reads them). */
export type StoredRates = Readonly<Record<RateField, string>>

/** The reads a group's rollup days are made of. */
export interface StoredRollupInput {
  /** The group's stored records (a wallet's own, or its accounts'), any order; summed by report. */
  rows: readonly ({ report_epoch: string } & StoredAmounts)[]
  /** The read's reports, oldest first: the report before the range first when there is one. */
  reports: readonly { report_epoch: string; date: string }[]
  /** The reports of the range (the days returned). */
  inRange: ReadonlySet<string>
  /** A report's facts (undefined: no wallet record of it: the day is left out). */
  factsOf(epoch: string): ReportFacts | undefined
  /** The group's wallet records of a report, whose common rates the day states (`statedRates`). */
  walletsOf(epoch: string): readonly StoredRates[] | undefined
  /** The day's prices in the read's currency (`{}`: no fiat asked). */
  pricesOf(epoch: string): Pick<RollupDay, 'price' | 'opening_price'>
}

/**
 * The rollup days of one wallet or group: each report of the range with a record, its amounts summed over the
 * group's records, the balances of its record of the report before (none: 0, the group held nothing then),
 * the report's facts, the rates its wallets all state and its prices.
 */
export function storedRollupDays(input: StoredRollupInput): RollupDay[] {
  const sums = new Map<string, WalletAmounts>()
  for (const row of input.rows) {
    const sum = sums.get(row.report_epoch) ?? zeroWalletAmounts()
    addWalletAmounts(sum, storedAmounts(row))
    sums.set(row.report_epoch, sum)
  }
  const out: RollupDay[] = []
  input.reports.forEach((report, i) => {
    const amounts = sums.get(report.report_epoch)
    const facts = input.factsOf(report.report_epoch)
    if (!input.inRange.has(report.report_epoch) || !amounts || !facts) return
    const before = input.reports[i - 1]
    const previous = before ? sums.get(before.report_epoch) : undefined
    const wallets = input.walletsOf(report.report_epoch)
    out.push({
      date: report.date,
      fee_model: facts.fee_model,
      amounts,
      opening_balance_lseth: previous?.balance_lseth ?? 0n,
      opening_balance_eth: previous?.balance_eth ?? 0n,
      conversion_rate: facts.conversion_rate,
      previous_conversion_rate: facts.previous_conversion_rate,
      gross_protocol_fee_rate: facts.gross_protocol_fee_rate,
      ...(wallets ? { rates: statedRates(wallets) } : {}),
      ...input.pricesOf(report.report_epoch),
    })
  })
  return out
}
