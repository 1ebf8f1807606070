import { copyText } from '../../db/bulk.ts'
import type { CopyRows } from '../../db/copy-rows.ts'
import { WALLET_AMOUNT_COLUMNS, WALLET_RECORD_COLUMNS } from '../../db/records/columns.ts'
import { type DayKey, PREVIOUS_ROW_COLUMNS } from '../../db/repos/records.ts'
import {
  CUMULATIVE_FIELDS,
  DORMANT_AMOUNT_FIELDS,
  DORMANT_ZERO_FIELDS,
  type DormantAmounts,
  ENGINE_VERSION,
  type WalletRecord,
} from '../../engine/index.ts'

/**
 * Wallet records as the COPY text lines of `wallet_records` (`WALLET_RECORD_COLUMNS`), each line's rest built
 * by concatenation: a rope the caller appends to its chunk, flattened once, for the hash (built, hashed and
 * encoded in a loop on one core, 2.7 µs a line against 3.5 µs for a line's ~90 pieces pushed on an array
 * joined per chunk: bench/README.md). A line is `head` (chain id, epoch, version) + `rest`; the day's
 * content hash covers each line without its version, so the pipeline hashes `hashHead + rest` and writes
 * `copyHead + rest`. Dormant wallets take their balance and unchanged totals verbatim from the previous
 * day's COPY text row (`PREVIOUS_ROW_COLUMNS`: address, balance, totals).
 */

const KEY_COLUMNS = ['chain_id', 'report_epoch', 'version', 'address'] as const
const firstAmount = (WALLET_RECORD_COLUMNS as readonly string[]).indexOf(WALLET_AMOUNT_COLUMNS[0] as string)
/** The columns between the address and the amounts: the report's constants and the wallet's attribution. */
const MIDDLE_COLUMNS = WALLET_RECORD_COLUMNS.slice(KEY_COLUMNS.length, firstAmount)
// the layout this file writes: key columns, middle, the amounts in WALLET_AMOUNT_COLUMNS order, engine version
if (
  KEY_COLUMNS.some((c, i) => WALLET_RECORD_COLUMNS[i] !== c) ||
  WALLET_RECORD_COLUMNS.slice(firstAmount, -1).join() !== WALLET_AMOUNT_COLUMNS.join() ||
  WALLET_RECORD_COLUMNS.at(-1) !== 'engine_version'
) {
  throw new Error('wallet_records columns are not in the order jobs/days/wallet-lines.ts writes them')
}

/**
 * How a dormant wallet's amount columns are written, in column order (each step ends with a tab):
 * `VERBATIM` fields `from`..`to` of the previous row as they are (consecutive ones in one piece), an
 * `AMOUNT` of its dormant amounts, `CONSTANT` text, or a `TOTAL`: the previous total plus the period amount.
 */
const VERBATIM = 0
const AMOUNT = 1
const CONSTANT = 2
const TOTAL = 3
type Step =
  | { kind: typeof VERBATIM; from: number; to: number }
  | { kind: typeof AMOUNT; field: keyof DormantAmounts }
  | { kind: typeof CONSTANT; text: string }
  | { kind: typeof TOTAL; previous: number; period: keyof DormantAmounts }

const dormantFields = new Set<string>(DORMANT_AMOUNT_FIELDS)
const zeroFields = new Set<string>(DORMANT_ZERO_FIELDS)
const periodOfTotal = new Map<string, string>(CUMULATIVE_FIELDS.map(([period, total]) => [total, period]))

/** Where each total lies in a previous day's row (`PREVIOUS_ROW_COLUMNS`: address, balance, totals). */
const totalIndex = new Map<string, number>(
  PREVIOUS_ROW_COLUMNS.map((c, i) => [c, i] as const).filter(([c]) => c.startsWith('total_')),
)
if (PREVIOUS_ROW_COLUMNS[0] !== 'address' || PREVIOUS_ROW_COLUMNS[1] !== 'balance_lseth') {
  throw new Error('previous rows are not in the order jobs/days/wallet-lines.ts reads them')
}

function stepOf(column: string): Step {
  if (column === 'balance_lseth') return { kind: VERBATIM, from: 1, to: 1 }
  const previous = totalIndex.get(column)
  if (previous !== undefined) {
    const period = periodOfTotal.get(column)
    if (period === undefined) throw new Error(`no period field for ${column}`)
    if (zeroFields.has(period)) return { kind: VERBATIM, from: previous, to: previous }
    if (!dormantFields.has(period)) throw new Error(`dormant wallets do not compute ${period}`)
    return { kind: TOTAL, previous, period: period as keyof DormantAmounts }
  }
  if (zeroFields.has(column)) return { kind: CONSTANT, text: '0' }
  if (dormantFields.has(column)) return { kind: AMOUNT, field: column as keyof DormantAmounts }
  throw new Error(`dormant wallets do not compute ${column}`)
}

/** The dormant steps of every amount column, neighbours merged (verbatim fields, constants). */
const DORMANT_STEPS: readonly Step[] = WALLET_AMOUNT_COLUMNS.map(stepOf).reduce<Step[]>((steps, step) => {
  const last = steps.at(-1)
  if (last?.kind === VERBATIM && step.kind === VERBATIM && step.from === last.to + 1) last.to = step.to
  else if (last?.kind === CONSTANT && step.kind === CONSTANT) last.text += `\t${step.text}`
  else steps.push({ ...step })
  return steps
}, [])

/** The line parts of one run of a day. */
export interface WalletLines {
  /** `chain_id \t report_epoch \t`: starts a line as the content hash sees it. */
  hashHead: string
  /** `chain_id \t report_epoch \t version \t`: starts a line as it is written. */
  copyHead: string
  /** The middle columns of a record (report constants, attribution), with a tab after each. */
  middle(record: WalletRecord, originatorOrgId: string | null): string
  /**
   * The rest of a computed record's line (address to engine version, newline included), with `middle`, the
   * middle of its attribution (`middle()` of a record of the same report and attribution).
   */
  record(record: WalletRecord, middle: string): string
  /**
   * The rest of a dormant wallet's line, from its address, its previous day's row (`previous`, on that row),
   * the middle of its kind (`middle`) and its dormant amounts: unchanged totals stay as the previous day
   * wrote them.
   */
  dormant(address: string, previous: CopyRows, middle: string, amounts: DormantAmounts): string
}

/**
 * The line parts of a run: heads for the run's key, lines of computed or dormant records.
 *
 * @example
 * const lines = createWalletLines(key)
 * chunk += lines.copyHead + lines.record(record, lines.middle(record, null))
 */
export function createWalletLines(key: DayKey): WalletLines {
  const hashHead = `${copyText(key.chainId)}\t${copyText(key.epoch)}\t`
  const tail = `${copyText(ENGINE_VERSION)}\n`
  return {
    hashHead,
    copyHead: `${hashHead}${copyText(key.version)}\t`,
    middle(record, originator) {
      const source = record as unknown as Record<string, string | boolean | null>
      let out = ''
      for (const column of MIDDLE_COLUMNS) {
        out += `${copyText(column === 'originator_org_id' ? originator : (source[column] ?? null))}\t`
      }
      return out
    },
    record(record, middle) {
      const source = record as unknown as Record<string, bigint>
      let line = `${copyText(record.address)}\t${middle}`
      for (const column of WALLET_AMOUNT_COLUMNS) line += `${source[column]}\t`
      return line + tail
    },
    dormant(address, previous, middle, amounts) {
      let line = `${address}\t${middle}`
      for (const step of DORMANT_STEPS) {
        switch (step.kind) {
          case VERBATIM:
            line += `${previous.fields(step.from, step.to)}\t`
            break
          case AMOUNT:
            line += `${amounts[step.field]}\t`
            break
          case CONSTANT:
            line += `${step.text}\t`
            break
          case TOTAL: {
            const period = amounts[step.period]
            const total = previous.field(step.previous)
            line += period === 0n ? `${total}\t` : `${BigInt(total) + period}\t`
          }
        }
      }
      return line + tail
    },
  }
}
