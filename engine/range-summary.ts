import type { WalletAmounts } from './account-record.ts'
import { zeroWalletAmounts } from './account-record.ts'
import { InvalidInputError } from './errors.ts'
import { CUMULATIVE_FIELDS } from './wallet-record.ts'

/**
 * Totals of a wallet or an account over a range of reports (the reward summaries): what the range adds up
 * to, and where it ends. Exact bigint sums, no rounding.
 */

/**
 * Summarizes consecutive daily amounts (oldest first) of one wallet or account:
 * - every period amount (`rewards_eth`, `fees_eth`, `mints_lseth`, ...) = its sum over the range;
 * - `balance_lseth`, `balance_eth` and every cumulative `total_*` = the value at the last report of the range.
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
  for (const day of days) {
    for (const [period] of CUMULATIVE_FIELDS) out[period] += day[period]
  }
  out.balance_lseth = last.balance_lseth
  out.balance_eth = last.balance_eth
  for (const [, total] of CUMULATIVE_FIELDS) out[total] = last[total]
  return out
}
