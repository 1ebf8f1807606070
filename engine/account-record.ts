import { InvalidInputError } from './errors.ts'
import type { WalletAmountField, WalletRecord } from './wallet-record.ts'
import { WALLET_AMOUNT_FIELDS } from './wallet-record.ts'

/**
 * Account reward record: the account's wallet records for a date and their totals. Totals are exact sums
 * of the wallets' bigint amounts, so they do not depend on the order of the wallets.
 */

/** Every amount field of a wallet record, summed. */
export type WalletAmounts = Record<WalletAmountField, bigint>

/** An account's reward record for one date. */
export interface AccountRecord {
  account_id: string
  date: string
  totals: WalletAmounts
  wallets: WalletRecord[]
}

/**
 * All-zero amounts (the neutral element of `addWalletAmounts`).
 *
 * @example
 * zeroWalletAmounts().rewards_eth // 0n
 */
export function zeroWalletAmounts(): WalletAmounts {
  const zero = {} as WalletAmounts
  for (const field of WALLET_AMOUNT_FIELDS) zero[field] = 0n
  return zero
}

/**
 * Adds one record's amounts into `into` (mutates and returns it): for streaming sums over shards.
 *
 * @example
 * const totals = zeroWalletAmounts(); for (const r of records) addWalletAmounts(totals, r)
 */
export function addWalletAmounts(
  into: WalletAmounts,
  record: Pick<WalletRecord, WalletAmountField>,
): WalletAmounts {
  for (const field of WALLET_AMOUNT_FIELDS) into[field] += record[field]
  return into
}

/**
 * Sums every amount field (balance, period amounts and cumulative totals) over records.
 *
 * @example
 * sumWalletAmounts([a, b]).balance_lseth === a.balance_lseth + b.balance_lseth // true
 */
export function sumWalletAmounts(records: Iterable<Pick<WalletRecord, WalletAmountField>>): WalletAmounts {
  const totals = zeroWalletAmounts()
  for (const record of records) addWalletAmounts(totals, record)
  return totals
}

/**
 * The account record for `date`: its wallet records and their totals. Every record must be of that date
 * and attributed to that account (as of its report).
 *
 * @example
 * computeAccountRecord('5f0c…', '2026-05-01', [w1, w2]).totals.rewards_eth // w1.rewards_eth + w2.rewards_eth
 */
export function computeAccountRecord(
  accountId: string,
  date: string,
  wallets: readonly WalletRecord[],
): AccountRecord {
  for (const wallet of wallets) {
    if (wallet.date !== date || wallet.account_id !== accountId) {
      throw new InvalidInputError('a wallet record of another date or account was given', {
        details: { account_id: accountId, date, wallet: wallet.address, wallet_date: wallet.date },
      })
    }
  }
  return { account_id: accountId, date, totals: sumWalletAmounts(wallets), wallets: [...wallets] }
}
