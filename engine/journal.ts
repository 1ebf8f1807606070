import { InvalidInputError } from './errors.ts'
import { FIAT_DECIMALS, fiatValue } from './fiat.ts'
import type { PriceAnswer, RolledPeriod } from './rollup.ts'
import { parseUnits } from './units.ts'

/**
 * Double-entry journal lines of a rolled period (engine/rollup.ts) of one account: what an accounting system
 * imports at a month-end close (docs/finance.md). Every movement of the period is one entry of two lines, a
 * debit and a credit of the same amount, so the lines of an account and period balance to the wei (and, in
 * fiat, to the 10^-8 unit of every served fiat value); the holdings account moves by exactly the period's
 * closing less opening `balance_eth` (and, in fiat, `balance_<currency>` less `opening_balance_<currency>`).
 *
 * Entries, for a positive amount (a negative one, e.g. gross rewards of a period that lost, swaps the two
 * sides; wei and fiat each take the side of their own sign):
 * - `gross_rewards`: Dr holdings, Cr staking income: `gross_rewards_eth`;
 * - `fee:<part>`: Dr fee expense, Cr holdings: each fee part of either fee model (`lc`, `tech_provider`,
 *   `dao`, `provider`, `slashing`, `operator`, `platform`; a period across the 2026-05-01 cutover has parts of
 *   both); they sum to `fees_eth`, so holdings are left with the net `rewards_eth`;
 * - `rebate`: Dr rebate receivable, Cr fee expense: `rebate_eth` (the platform owes it back: the net fee
 *   expense is what the account paid);
 * - `mints` / `burns`: Dr holdings, Cr clearing / Dr clearing, Cr holdings: `mints_eth` / `burns_eth`
 *   (deposits and redemptions, each at its report's rate);
 * - `transfers`: Dr holdings, Cr clearing: what the balance moved beyond the flows above (LsETH transferred
 *   in or out, which no record counts as a flow, and the records' wei floors): closing - opening balance_eth
 *   - rewards_eth - mints_eth + burns_eth; in fiat at the closing price;
 * - `revaluation` (fiat only): Dr holdings, Cr revaluation: the change of the holdings' fiat value the entries
 *   above do not explain (the price moved): closing - opening balance in fiat - their holdings fiat.
 * An entry whose amounts are all zero is left out.
 */

/** The ledger accounts of the journal, in the order their lines are listed. */
export const JOURNAL_LEDGER_KEYS = [
  'holdings',
  'staking_income',
  'fee_expense',
  'rebate_receivable',
  'clearing',
  'revaluation',
] as const

/** A ledger account of the journal. */
export type JournalLedgerKey = (typeof JOURNAL_LEDGER_KEYS)[number]

/**
 * The ledger account names a journal line carries unless the operator renames them.
 *
 * @example
 * DEFAULT_JOURNAL_ACCOUNTS.fee_expense // 'Staking fee expense'
 */
export const DEFAULT_JOURNAL_ACCOUNTS: Readonly<Record<JournalLedgerKey, string>> = {
  holdings: 'Staked ETH (LsETH)',
  staking_income: 'Staking income',
  fee_expense: 'Staking fee expense',
  rebate_receivable: 'Staking fee rebate receivable',
  clearing: 'LsETH deposits, redemptions and transfers clearing',
  revaluation: 'Staked ETH revaluation gain or loss',
}

/** An operator's names for some ledger accounts (`journal_accounts` of POST /v1/exports): key -> name. */
export type JournalAccountMapping = Partial<Record<JournalLedgerKey, string>>

/** The longest ledger account name a mapping may give. */
const MAX_NAME = 200

/**
 * The ledger account names with an operator's mapping applied; refuses an unknown key or a name that is
 * empty, longer than 200 characters or holds a control character (InvalidInputError, 400 at the API).
 *
 * @example
 * journalAccountNames({ fee_expense: '6100 Staking fees' }).fee_expense // '6100 Staking fees'
 * journalAccountNames({ fee_expense: '6100 Staking fees' }).holdings // 'Staked ETH (LsETH)'
 */
export function journalAccountNames(
  mapping: Readonly<Record<string, unknown>> = {},
): Record<JournalLedgerKey, string> {
  const names = { ...DEFAULT_JOURNAL_ACCOUNTS }
  for (const [key, name] of Object.entries(mapping)) {
    if (!(JOURNAL_LEDGER_KEYS as readonly string[]).includes(key)) {
      throw new InvalidInputError(
        `journal_accounts: unknown ledger account ${JSON.stringify(key)} (one of ${JOURNAL_LEDGER_KEYS.join(', ')})`,
        { details: { key } },
      )
    }
    if (
      typeof name !== 'string' ||
      name.trim() === '' ||
      name.length > MAX_NAME ||
      [...name].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127)
    ) {
      throw new InvalidInputError(
        `journal_accounts.${key} must be a name of 1 to ${MAX_NAME} printable characters`,
        { details: { key } },
      )
    }
    names[key as JournalLedgerKey] = name
  }
  return names
}

/** The fee parts of both fee models (V3 first), each booked as its own fee expense entry. */
const FEE_PARTS = [
  ['lc', 'lc_fees_eth', 'Liquid Collective'],
  ['tech_provider', 'tech_provider_fees_eth', 'technology provider'],
  ['dao', 'dao_fees_eth', 'DAO'],
  ['provider', 'provider_fees_eth', 'provider'],
  ['slashing', 'slashing_fees_eth', 'slashing coverage'],
  ['operator', 'operator_fees_eth', 'node operators'],
  ['platform', 'platform_fees_eth', 'platform'],
] as const

/** What a journal entry records. */
export type JournalMovement =
  | 'gross_rewards'
  | `fee:${(typeof FEE_PARTS)[number][0]}`
  | 'rebate'
  | 'mints'
  | 'burns'
  | 'transfers'
  | 'revaluation'

/** One line of the journal: one side of an entry. */
export interface JournalLine {
  /** The period's last date within the range asked for (YYYY-MM-DD, UTC). */
  date: string
  /** `2026-04`, `2026-Q2`, ... (engine/periods.ts). */
  period: string
  /** The period's first date within the range. */
  from: string
  /** Cut by the range or with fewer reports than calendar days (engine/rollup.ts). */
  partial: boolean
  account_id: string
  /** The entry's number within the account and period, from 1: its two lines share it. */
  entry: number
  movement: JournalMovement
  ledger_account: JournalLedgerKey
  ledger_account_name: string
  /** wei; one of debit and credit is 0. */
  debit_wei: bigint
  credit_wei: bigint
  /** Fiat units of 10^-8 (engine/fiat.ts); null: no currency asked, or a price is missing. */
  debit_fiat: bigint | null
  credit_fiat: bigint | null
  memo: string
}

/** The account and period a journal is made of, and where its amounts come from. */
export interface JournalPeriodInput {
  accountId: string
  period: RolledPeriod
}

/** How the journal is made: the names of its ledger accounts, and whether fiat amounts are wanted. */
export interface JournalOptions {
  names?: Record<JournalLedgerKey, string>
  /** The read's currency (it names the fiat in memos); absent: no fiat. */
  currency?: string
}

/** Fiat units (10^-8) of wei at a price: `fiatValue` rounded once half-even to 8 places. */
function fiatUnits(wei: bigint, price: PriceAnswer): bigint {
  return parseUnits(fiatValue(wei, price.answer, price.decimals), FIAT_DECIMALS)
}

/**
 * A balance's fiat value: the rollup's, or 0 for an empty balance whose date has no price (an empty holding
 * is worth 0 at any price: the first period of a history has no report before it to price its opening).
 */
function balanceFiat(value: bigint | null, balanceEth: bigint): bigint | null {
  return value ?? (balanceEth === 0n ? 0n : null)
}

/**
 * The journal lines of one account's rolled period, entry by entry (debit line first), in the order of the
 * module comment. Pure and exact: wei are the period's sums; fiat amounts are the rollup's fiat of the same
 * flows (each day's value at its own price), the transfers' value at the closing price and the revaluation
 * derived, so each entry carries one fiat amount on both lines.
 *
 * @example
 * const lines = journalLines({ accountId, period: rollUp(days, from, to, 'month')[0] }, { currency: 'usd' })
 * lines.reduce((s, l) => s + l.debit_wei - l.credit_wei, 0n) // 0n
 */
export function journalLines(input: JournalPeriodInput, options: JournalOptions = {}): JournalLine[] {
  const { period: p, accountId } = input
  const names = options.names ?? DEFAULT_JOURNAL_ACCOUNTS
  const fiatOn = options.currency !== undefined && p.fiat !== undefined
  const fiat = p.fiat
  const flowFiat = (field: keyof RolledPeriod['flows']): bigint | null =>
    fiatOn ? (fiat?.flows[field] ?? null) : null
  const lines: JournalLine[] = []
  let entry = 0
  const book = (
    movement: JournalMovement,
    debit: JournalLedgerKey,
    credit: JournalLedgerKey,
    wei: bigint,
    fiatAmount: bigint | null,
    memo: string,
  ) => {
    if (wei === 0n && (fiatAmount === null || fiatAmount === 0n)) return
    entry += 1
    const head = { date: p.to, period: p.period, from: p.from, partial: p.partial, account_id: accountId }
    const side = (key: JournalLedgerKey, sign: 1n | -1n): JournalLine => {
      const w = wei * sign
      const f = fiatAmount === null ? null : fiatAmount * sign
      return {
        ...head,
        entry,
        movement,
        ledger_account: key,
        ledger_account_name: names[key],
        debit_wei: w > 0n ? w : 0n,
        credit_wei: w < 0n ? -w : 0n,
        debit_fiat: f === null ? null : f > 0n ? f : 0n,
        credit_fiat: f === null ? null : f < 0n ? -f : 0n,
        memo,
      }
    }
    lines.push(side(debit, 1n), side(credit, -1n))
  }
  const f = p.flows
  const models = p.fee_models.join(' and ')
  book(
    'gross_rewards',
    'holdings',
    'staking_income',
    f.gross_rewards_eth,
    flowFiat('gross_rewards_eth'),
    `Staking rewards before fees, ${p.period} (${p.days} reports, fee model ${models})`,
  )
  for (const [part, field, label] of FEE_PARTS) {
    book(
      `fee:${part}`,
      'fee_expense',
      'holdings',
      f[field],
      flowFiat(field),
      `Protocol fee, ${label} part (${field})`,
    )
  }
  book(
    'rebate',
    'rebate_receivable',
    'fee_expense',
    f.rebate_eth,
    flowFiat('rebate_eth'),
    'Rebate of the platform fee above the target fee rate (rebate_eth)',
  )
  book(
    'mints',
    'holdings',
    'clearing',
    f.mints_eth,
    flowFiat('mints_eth'),
    'LsETH minted (deposits), at each report’s rate',
  )
  book(
    'burns',
    'clearing',
    'holdings',
    f.burns_eth,
    flowFiat('burns_eth'),
    'LsETH burned (redemptions), at each report’s rate',
  )
  const moved = p.closing.balance_eth - p.opening.balance_eth
  const transfers = moved - f.rewards_eth - f.mints_eth + f.burns_eth
  const closingPrice = fiat?.closing_price ?? null
  const transfersFiat = fiatOn ? (closingPrice ? fiatUnits(transfers, closingPrice) : null) : null
  book(
    'transfers',
    'holdings',
    'clearing',
    transfers,
    transfersFiat,
    'LsETH transferred in or out and wei roundings: the balance change beyond rewards, mints and burns',
  )
  if (fiatOn && fiat) {
    const closing = balanceFiat(fiat.closing_balance, p.closing.balance_eth)
    const opening = balanceFiat(fiat.opening_balance, p.opening.balance_eth)
    const parts: (bigint | null)[] = [
      flowFiat('gross_rewards_eth'),
      ...FEE_PARTS.map(([, field]) => {
        const v = flowFiat(field)
        return v === null ? null : -v
      }),
      flowFiat('mints_eth'),
      (() => {
        const v = flowFiat('burns_eth')
        return v === null ? null : -v
      })(),
      transfersFiat,
    ]
    const known = closing !== null && opening !== null && parts.every((x) => x !== null)
    const revaluation = known
      ? closing - opening - parts.reduce<bigint>((s, x) => s + (x as bigint), 0n)
      : null
    book(
      'revaluation',
      'holdings',
      'revaluation',
      0n,
      revaluation,
      `Revaluation of the holdings in ${options.currency?.toUpperCase()}: the change of their value the entries above do not explain`,
    )
  }
  return lines
}
