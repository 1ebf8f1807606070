import type { WalletAmounts } from './account-record.ts'
import { zeroWalletAmounts } from './account-record.ts'
import { InvalidInputError } from './errors.ts'
import { kindOf } from './field-kinds.ts'
import { WALLET_AMOUNT_FIELDS } from './wallet-record.ts'

/**
 * Totals of a wallet or an account over a range of reports (the reward summaries): what the range adds up
 * to, and where it ends. Exact bigint sums, no rounding.
 */

/**
 * Summarizes consecutive daily amounts (oldest first) of one wallet or account by the stock/flow rule
 * (field-kinds.ts; the summaries' opening values and rates: rollup.ts):
 * - every flow (`rewards_eth`, `fees_eth`, `mints_lseth`, ...) = its sum over the range;
 * - every stock (`balance_lseth`, `balance_eth`, each running `total_*`) = its value at the last report.
 * So `total_X(last) - total_X(first) + X(first)` equals the range's X whenever the range has no gap.
 *
 * @example
 * summarizeRange([day1, day2]).rewards_eth === day1.rewards_eth + day2.rewards_eth // true
 * summarizeRange([day1, day2]).total_rewards_eth === day2.total_rewards_eth // true
 */
export function summarizeRange(days: readonly WalletAmounts[]): WalletAmounts {
  const last = days[days.length - 1]
  if (last === undefined)
    throw new InvalidInputError('a range summary needs at least one report', { details: {} })
  const out = zeroWalletAmounts()
  for (const field of WALLET_AMOUNT_FIELDS) {
    if (kindOf(field) === 'stock') out[field] = last[field]
    else for (const day of days) out[field] += day[field]
  }
  return out
}
