import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { arbRollupHistory } from '../fixtures/rollup-histories.ts'
import { zeroWalletAmounts } from './account-record.ts'
import { InvalidInputError } from './errors.ts'
import {
  DEFAULT_JOURNAL_ACCOUNTS,
  JOURNAL_LEDGER_KEYS,
  type JournalLedgerKey,
  type JournalLine,
  journalAccountNames,
  journalLines,
} from './journal.ts'
import { GRANULARITIES } from './periods.ts'
import { type RolledPeriod, type RollupDay, rollUp } from './rollup.ts'

/** Net debit (debit - credit) of some lines, in wei and in fiat (null when a fiat amount is missing). */
function net(lines: readonly JournalLine[], key?: JournalLedgerKey) {
  const of = key === undefined ? lines : lines.filter((l) => l.ledger_account === key)
  let wei = 0n
  let fiat: bigint | null = 0n
  for (const l of of) {
    wei += l.debit_wei - l.credit_wei
    fiat =
      fiat === null || l.debit_fiat === null || l.credit_fiat === null
        ? null
        : fiat + l.debit_fiat - l.credit_fiat
  }
  return { wei, fiat }
}

/** Every law of the journal over one account's rolled period. */
function checkJournal(p: RolledPeriod, lines: readonly JournalLine[], priced: boolean) {
  // balanced to the wei, entry by entry and so per account and period; one side per line and unit
  expect(net(lines).wei).toBe(0n)
  for (const l of lines) {
    expect(l.debit_wei === 0n || l.credit_wei === 0n).toBe(true)
    expect(l.debit_wei >= 0n && l.credit_wei >= 0n).toBe(true)
    expect(l.date).toBe(p.to)
    expect(l.period).toBe(p.period)
    if (!priced) expect(l.debit_fiat).toBeNull()
  }
  const entries = new Set(lines.map((l) => l.entry))
  expect(lines.length).toBe(2 * entries.size)
  for (const e of entries) {
    const pair = lines.filter((l) => l.entry === e)
    expect(net(pair).wei).toBe(0n)
    const fiat = net(pair).fiat
    if (fiat !== null) expect(fiat).toBe(0n)
  }
  // they tie back to the rollup's sums
  const f = p.flows
  expect(net(lines, 'holdings').wei).toBe(p.closing.balance_eth - p.opening.balance_eth)
  expect(-net(lines, 'staking_income').wei).toBe(f.gross_rewards_eth)
  expect(net(lines, 'fee_expense').wei).toBe(f.fees_eth - f.rebate_eth)
  expect(net(lines, 'rebate_receivable').wei).toBe(f.rebate_eth)
  expect(-net(lines, 'clearing').wei).toBe(p.closing.balance_eth - p.opening.balance_eth - f.rewards_eth)
  expect(net(lines, 'revaluation').wei).toBe(0n)
  const fees = lines.filter((l) => l.movement.startsWith('fee:') && l.ledger_account === 'fee_expense')
  expect(net(fees).wei).toBe(f.fees_eth)
  if (!priced || !p.fiat) return
  // in fiat: balanced, holdings move by the balance's fiat change, flows are the rollup's fiat
  const all = net(lines).fiat
  if (all !== null) expect(all).toBe(0n)
  const income = net(lines, 'staking_income').fiat
  const gross = p.fiat.flows.gross_rewards_eth
  if (gross !== null && gross !== undefined) expect(income === null ? null : -income).toBe(gross)
  const closing = p.fiat.closing_balance ?? (p.closing.balance_eth === 0n ? 0n : null)
  const opening = p.fiat.opening_balance ?? (p.opening.balance_eth === 0n ? 0n : null)
  const holdings = net(lines, 'holdings').fiat
  if (closing !== null && opening !== null && holdings !== null) {
    expect(holdings).toBe(closing - opening)
  }
}

describe('journalLines', () => {
  test.prop([arbRollupHistory(true), fc.constantFrom(...GRANULARITIES)], { numRuns: runs(150) })(
    'property: every account-period balances to the wei and in fiat, and ties back to the rollup (priced)',
    ({ days, from, to }, by) => {
      for (const p of rollUp(days, from, to, by)) {
        checkJournal(p, journalLines({ accountId: 'a', period: p }, { currency: 'usd' }), true)
      }
    },
  )

  test.prop([arbRollupHistory(false), fc.constantFrom(...GRANULARITIES)], { numRuns: runs(100) })(
    'property: without a currency every line is in wei only and still balances',
    ({ days, from, to }, by) => {
      for (const p of rollUp(days, from, to, by)) {
        checkJournal(p, journalLines({ accountId: 'a', period: p }), false)
      }
    },
  )

  test('behavior: a V3 month books gross income, each fee part, the rebate and a revaluation', () => {
    const amounts = zeroWalletAmounts()
    amounts.balance_lseth = 100n * 10n ** 18n
    amounts.balance_eth = 105n * 10n ** 18n
    amounts.gross_rewards_eth = 10n ** 17n
    amounts.fees_eth = 10n ** 16n
    amounts.rewards_eth = 9n * 10n ** 16n
    amounts.lc_fees_eth = 35n * 10n ** 14n
    amounts.tech_provider_fees_eth = 15n * 10n ** 14n
    amounts.operator_fees_eth = 25n * 10n ** 14n
    amounts.platform_fees_eth = 25n * 10n ** 14n
    amounts.rebate_eth = 2n * 10n ** 15n
    const day: RollupDay = {
      date: '2026-05-31',
      fee_model: 'v3',
      amounts,
      opening_balance_lseth: amounts.balance_lseth,
      opening_balance_eth: amounts.balance_eth - amounts.rewards_eth,
      conversion_rate: '1.05',
      previous_conversion_rate: '1.0491',
      gross_protocol_fee_rate: '0.1',
      price: { answer: 4_000_00000000n, decimals: 8 },
      opening_price: { answer: 3_900_00000000n, decimals: 8 },
    }
    const [p] = rollUp([day], '2026-05-01', '2026-05-31', 'month')
    const lines = journalLines({ accountId: 'acc', period: p as RolledPeriod }, { currency: 'usd' })
    expect(lines.map((l) => [l.movement, l.ledger_account, l.debit_wei, l.credit_wei])).toEqual([
      ['gross_rewards', 'holdings', 10n ** 17n, 0n],
      ['gross_rewards', 'staking_income', 0n, 10n ** 17n],
      ['fee:lc', 'fee_expense', 35n * 10n ** 14n, 0n],
      ['fee:lc', 'holdings', 0n, 35n * 10n ** 14n],
      ['fee:tech_provider', 'fee_expense', 15n * 10n ** 14n, 0n],
      ['fee:tech_provider', 'holdings', 0n, 15n * 10n ** 14n],
      ['fee:operator', 'fee_expense', 25n * 10n ** 14n, 0n],
      ['fee:operator', 'holdings', 0n, 25n * 10n ** 14n],
      ['fee:platform', 'fee_expense', 25n * 10n ** 14n, 0n],
      ['fee:platform', 'holdings', 0n, 25n * 10n ** 14n],
      ['rebate', 'rebate_receivable', 2n * 10n ** 15n, 0n],
      ['rebate', 'fee_expense', 0n, 2n * 10n ** 15n],
      ['revaluation', 'holdings', 0n, 0n],
      ['revaluation', 'revaluation', 0n, 0n],
    ])
    // 0.1 ETH at $4,000 = $400; the holdings' value went from 104.91 x 3,900 to 105 x 4,000: the rest is price
    expect(lines[1]?.credit_fiat).toBe(400_00000000n)
    const reval = lines.find((l) => l.ledger_account === 'revaluation')
    expect(reval?.credit_fiat).toBe(105n * 4000n * 10n ** 8n - 104_91n * 39n * 10n ** 8n - 360_00000000n)
    expect(lines.every((l) => l.ledger_account_name === DEFAULT_JOURNAL_ACCOUNTS[l.ledger_account])).toBe(
      true,
    )
  })
})

describe('journalAccountNames', () => {
  test('behavior: an operator renames some ledger accounts, the others keep their default', () => {
    const names = journalAccountNames({ fee_expense: '6100 Staking fees', holdings: '1400 LsETH' })
    expect(names.fee_expense).toBe('6100 Staking fees')
    expect(names.holdings).toBe('1400 LsETH')
    expect(names.staking_income).toBe(DEFAULT_JOURNAL_ACCOUNTS.staking_income)
    expect(Object.keys(names)).toEqual([...JOURNAL_LEDGER_KEYS])
  })

  test('behavior: an unknown ledger account or an empty name is refused', () => {
    expect(() => journalAccountNames({ cash: 'Cash' })).toThrow(InvalidInputError)
    expect(() => journalAccountNames({ holdings: ' ' })).toThrow(/1 to 200 printable/)
    expect(() => journalAccountNames({ holdings: 'a\nb' })).toThrow(InvalidInputError)
  })
})
