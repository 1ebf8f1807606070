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
 * Wallet records as the COPY text lines of `wallet_records` (`WALLET_RECORD_COLUMNS`), built as strings
 * without a value array per row. A line is `head` (chain id, epoch, version) + `rest`; the day's content
 * hash covers each line without its version, so the pipeline hashes `hashHead + rest` and writes
 * `copyHead + rest`. Dormant wallets take their balance and unchanged totals verbatim from the previous
 * day's COPY text row (`PREVIOUS_ROW_COLUMNS`: address, balance, totals).
 */

const KEY_COLUMNS = ['chain_id', 'report_epoch', 'version', 'address'] as const
const firstAmount = WALLET_RECORD_COLUMNS.indexOf('balance_lseth')
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

/** How one amount column of a dormant wallet's line is written. */
type AmountOp =
  | { kind: 'balance' }
  | { kind: 'amount'; field: keyof DormantAmounts }
  | { kind: 'zero' }
  | { kind: 'total'; previous: number; period: keyof DormantAmounts | null }

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

const AMOUNT_OPS: AmountOp[] = WALLET_AMOUNT_COLUMNS.map((column): AmountOp => {
  if (column === 'balance_lseth') return { kind: 'balance' }
  const previous = totalIndex.get(column)
  if (previous !== undefined) {
    const period = periodOfTotal.get(column)
    if (period === undefined) throw new Error(`no period field for ${column}`)
    if (zeroFields.has(period)) return { kind: 'total', previous, period: null }
    if (!dormantFields.has(period)) throw new Error(`dormant wallets do not compute ${period}`)
    return { kind: 'total', previous, period: period as keyof DormantAmounts }
  }
  if (zeroFields.has(column)) return { kind: 'zero' }
  if (dormantFields.has(column)) return { kind: 'amount', field: column as keyof DormantAmounts }
  throw new Error(`dormant wallets do not compute ${column}`)
})

/** The line parts of one run of a day. */
export interface WalletLines {
  /** `chain_id \t report_epoch \t`: starts a line as the content hash sees it. */
  hashHead: string
  /** `chain_id \t report_epoch \t version \t`: starts a line as it is written. */
  copyHead: string
  /** The middle columns of a record (report constants, attribution), with a tab after each. */
  middle(record: WalletRecord, originatorOrgId: string | null): string
  /** The rest of a computed record's line (address to engine version, newline included). */
  record(record: WalletRecord, originatorOrgId: string | null): string
  /**
   * The rest of a dormant wallet's line from its previous day's row (`previous`, on that row), the middle
   * of its kind (`middle`) and its dormant amounts: unchanged totals stay as the previous day wrote them.
   */
  dormant(previous: CopyRows, middle: string, amounts: DormantAmounts): string
}

/**
 * The line parts of a run: heads for the run's key, lines of computed or dormant records.
 *
 * @example
 * const lines = createWalletLines(key)
 * chunk += lines.copyHead + lines.record(record, null)
 */
export function createWalletLines(key: DayKey): WalletLines {
  const hashHead = `${copyText(key.chainId)}\t${copyText(key.epoch)}\t`
  const tail = `${copyText(ENGINE_VERSION)}\n`
  const middle = (record: WalletRecord, originator: string | null) => {
    const source = record as unknown as Record<string, string | boolean | null>
    let out = ''
    for (const column of MIDDLE_COLUMNS) {
      out += `${copyText(column === 'originator_org_id' ? originator : (source[column] ?? null))}\t`
    }
    return out
  }
  return {
    hashHead,
    copyHead: `${hashHead}${copyText(key.version)}\t`,
    middle,
    record(record, originator) {
      const source = record as unknown as Record<string, bigint>
      let out = `${copyText(record.address)}\t${middle(record, originator)}`
      for (const column of WALLET_AMOUNT_COLUMNS) out += `${source[column]}\t`
      return out + tail
    },
    dormant(previous, middleOfKind, amounts) {
      let out = `${previous.field(0)}\t${middleOfKind}`
      for (const op of AMOUNT_OPS) {
        switch (op.kind) {
          case 'balance':
            out += `${previous.field(1)}\t`
            break
          case 'amount':
            out += `${amounts[op.field]}\t`
            break
          case 'zero':
            out += '0\t'
            break
          case 'total': {
            const period = op.period === null ? 0n : amounts[op.period]
            out +=
              period === 0n
                ? `${previous.field(op.previous)}\t`
                : `${BigInt(previous.field(op.previous)) + period}\t`
          }
        }
      }
      return out + tail
    },
  }
}
