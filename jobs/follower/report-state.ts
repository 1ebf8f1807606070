import type { DecodedLog } from '../../chain/log-decoding.ts'
import { ZERO_ADDRESS } from '../../common/address.ts'

/** River's pool and fee as read at the end of a report's block (eth_call answers for whole blocks only). */
export interface BlockEndReads {
  totalUnderlyingSupply: bigint
  totalSupply: bigint
  globalFee: bigint
  /** The fee at the end of the previous block: needed only when the fee changes after the report in its block. */
  globalFeeBeforeBlock?: bigint
}

/** River's U, S and fee right after the report transaction: what the report's rates and fee mint are. */
export type ReportTxState = Omit<BlockEndReads, 'globalFeeBeforeBlock'>

type Position = Pick<DecodedLog, 'blockNumber' | 'transactionIndex'>

const sameBlockAfter = (log: Position, report: Position) =>
  log.blockNumber === report.blockNumber && log.transactionIndex > report.transactionIndex
const sameBlockBefore = (log: Position, report: Position) =>
  log.blockNumber === report.blockNumber && log.transactionIndex < report.transactionIndex

/**
 * What a River log outside a report did to the pool: a deposit's `UserDeposit` amount to U, a mint (Transfer
 * from 0x0) to S, a burn (Transfer to 0x0) from S; nothing else moves them.
 */
function poolChange(log: DecodedLog): { underlying: bigint; supply: bigint } {
  // biome-ignore lint/suspicious/noExplicitAny: decoded args are validated by the fetcher against the ABI
  const a = log.args as any
  if (log.eventName === 'UserDeposit') return { underlying: a.amount, supply: 0n }
  if (log.eventName === 'Transfer' && a.from === ZERO_ADDRESS) return { underlying: 0n, supply: a.value }
  if (log.eventName === 'Transfer' && a.to === ZERO_ADDRESS)
    return { underlying: 0n, supply: 0n - (a.value as bigint) }
  return { underlying: 0n, supply: 0n }
}

/** U and S from `start`, with the pool changes of the `included` logs added (`sign` 1n) or undone (-1n). */
function movePool(
  start: PoolReads,
  logs: readonly DecodedLog[],
  included: (log: DecodedLog) => boolean,
  sign: 1n | -1n,
): PoolReads {
  let U = start.totalUnderlyingSupply
  let S = start.totalSupply
  for (const log of logs) {
    if (!included(log)) continue
    const moved = poolChange(log)
    U += sign * moved.underlying
    S += sign * moved.supply
  }
  return { totalUnderlyingSupply: U, totalSupply: S }
}

/**
 * A chunk's logs by block number, built once: each report looks only at the logs of its own block.
 *
 * @example
 * const byBlock = logsByBlock(chunkLogs); reportTxState(report, byBlock.get(report.blockNumber) ?? [], reads)
 */
export function logsByBlock(logs: readonly DecodedLog[]): Map<bigint, DecodedLog[]> {
  const byBlock = new Map<bigint, DecodedLog[]>()
  for (const log of logs) {
    const list = byBlock.get(log.blockNumber)
    if (list) list.push(log)
    else byBlock.set(log.blockNumber, [log])
  }
  return byBlock
}

/**
 * Whether `logs` change River's fee after `report` in its block: the block-end fee is then not the report's,
 * and the follower reads the fee at the previous block too (`globalFeeBeforeBlock`).
 */
export function feeChangesAfterReport(report: DecodedLog, logs: readonly DecodedLog[]): boolean {
  return logs.some((log) => log.eventName === 'SetGlobalFee' && sameBlockAfter(log, report))
}

/**
 * River's state right after a report transaction, from the block-end reads and River's logs of the block.
 * Later transactions of the same block are undone: a deposit's `UserDeposit` amount leaves U, every mint
 * (Transfer from 0x0) and burn (Transfer to 0x0) leaves S; nothing else outside a report moves River's U or S.
 * The fee is the last `SetGlobalFee` before the report in its block, else the block-end fee (none after the
 * report) or the previous block's. `logs` must hold every River log of the report's block (a chunk of the
 * follower holds whole blocks); logs of other blocks are passed over (`logsByBlock` keeps them out).
 *
 * @example
 * reportTxState(reportLog, chunkLogs, { totalUnderlyingSupply: 110n, totalSupply: 100n, globalFee: 1000n })
 */
export function reportTxState(
  report: DecodedLog,
  logs: readonly DecodedLog[],
  reads: BlockEndReads,
): ReportTxState {
  const pool = movePool(reads, logs, (log) => sameBlockAfter(log, report), -1n)
  let feeAfter: bigint | undefined
  let feeBefore: bigint | undefined
  for (const log of logs) {
    if (log.eventName !== 'SetGlobalFee') continue
    // biome-ignore lint/suspicious/noExplicitAny: decoded args are validated by the fetcher against the ABI
    const fee = (log.args as any).fee as bigint
    if (sameBlockAfter(log, report)) feeAfter = fee
    else if (sameBlockBefore(log, report)) feeBefore = fee
  }
  let fee = reads.globalFee
  if (feeAfter !== undefined) {
    const before = feeBefore ?? reads.globalFeeBeforeBlock
    if (before === undefined) {
      throw new Error(
        `reportTxState: the fee changes after the report of block ${report.blockNumber}; the previous block's fee is needed`,
      )
    }
    fee = before
  }
  return { ...pool, globalFee: fee }
}

/** River's U and S as read at the end of a block (the block before a report's, for `poolBeforeReport`). */
export interface PoolReads {
  totalUnderlyingSupply: bigint
  totalSupply: bigint
}

/**
 * River's U and S right before a report transaction: the previous block's end state plus what earlier
 * transactions of the report's block did (a deposit's `UserDeposit` amount adds to U, a mint adds to S, a burn
 * takes from it). The rate a day's growth starts from when no earlier report is stored. `logs` must hold every
 * River log of the report's block.
 *
 * @example
 * poolBeforeReport(reportLog, blockLogs, { totalUnderlyingSupply: 100n, totalSupply: 100n })
 */
export function poolBeforeReport(
  report: DecodedLog,
  logs: readonly DecodedLog[],
  endOfPreviousBlock: PoolReads,
): PoolReads {
  return movePool(endOfPreviousBlock, logs, (log) => sameBlockBefore(log, report), 1n)
}
