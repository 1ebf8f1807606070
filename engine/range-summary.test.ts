import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { type WalletAmounts, zeroWalletAmounts } from './account-record.ts'
import { InvalidInputError } from './errors.ts'
import { summarizeRange } from './range-summary.ts'
import { CUMULATIVE_FIELDS } from './wallet-record.ts'

/** A wallet's consecutive days: each total = previous total + the day's period value. */
const arbDays = fc
  .array(
    fc.record({
      balance: fc.bigInt({ min: 0n, max: 10n ** 24n }),
      periods: fc.array(fc.bigInt({ min: -(10n ** 18n), max: 10n ** 20n }), {
        minLength: CUMULATIVE_FIELDS.length,
        maxLength: CUMULATIVE_FIELDS.length,
      }),
    }),
    { minLength: 1, maxLength: 20 },
  )
  .map((raw) => {
    const days: WalletAmounts[] = []
    let previous = zeroWalletAmounts()
    for (const day of raw) {
      const amounts = zeroWalletAmounts()
      amounts.balance_lseth = day.balance
      CUMULATIVE_FIELDS.forEach(([period, total], i) => {
        amounts[period] = day.periods[i] as bigint
        amounts[total] = previous[total] + amounts[period]
      })
      days.push(amounts)
      previous = amounts
    }
    return days
  })

describe('summarizeRange', () => {
  test.prop([arbDays])(
    'behavior: period sums equal the change of the cumulative totals over the range',
    (days) => {
      const summary = summarizeRange(days)
      const first = days[0] as WalletAmounts
      const last = days[days.length - 1] as WalletAmounts
      for (const [period, total] of CUMULATIVE_FIELDS) {
        expect(summary[period]).toBe(last[total] - first[total] + first[period])
        expect(summary[total]).toBe(last[total])
      }
      expect(summary.balance_lseth).toBe(last.balance_lseth)
    },
  )

  test.prop([arbDays, fc.nat()])('behavior: splitting a range in two adds up', (days, at) => {
    const cut = 1 + (at % days.length)
    if (cut >= days.length) return
    const whole = summarizeRange(days)
    const a = summarizeRange(days.slice(0, cut))
    const b = summarizeRange(days.slice(cut))
    for (const [period] of CUMULATIVE_FIELDS) expect(whole[period]).toBe(a[period] + b[period])
  })

  test('behavior: an empty range is refused', () => {
    expect(() => summarizeRange([])).toThrow(InvalidInputError)
  })
})
