import { describe, expect, test } from 'vitest'
import type { DecodedLog } from '../../chain/log-decoding.ts'
import { toAddress, ZERO_ADDRESS } from '../../common/address.ts'
import { feeChangesAfterReport, reportTxState } from './report-state.ts'

const A = toAddress('0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')
const B = toAddress('0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb')

/** A decoded River log of transaction `txIndex` in `block`. */
function log(block: bigint, txIndex: number, eventName: string, args: unknown): DecodedLog {
  return {
    address: A,
    blockNumber: block,
    blockHash: `0x${'b'.repeat(64)}`,
    transactionHash: `0x${String(txIndex).repeat(64)}`,
    transactionIndex: txIndex,
    logIndex: txIndex * 10,
    eventName,
    args,
  } as DecodedLog
}

const report = log(10n, 2, 'ProcessedConsensusLayerReport', {})
const reads = { totalUnderlyingSupply: 1_000n, totalSupply: 900n, globalFee: 1_000n }

describe('reportTxState', () => {
  test('behavior: alone in its block, the report is the block-end reads', () => {
    expect(reportTxState(report, [report], reads)).toEqual(reads)
  })

  test('behavior: later deposits, mints and burns of the block are undone; earlier ones and other blocks stay', () => {
    const logs = [
      // before the report in its block, and in other blocks: part of the state the report starts from
      log(10n, 1, 'UserDeposit', { depositor: A, recipient: A, amount: 50n }),
      log(10n, 1, 'Transfer', { from: ZERO_ADDRESS, to: A, value: 45n }),
      log(11n, 0, 'UserDeposit', { depositor: A, recipient: A, amount: 7n }),
      log(11n, 0, 'Transfer', { from: ZERO_ADDRESS, to: A, value: 6n }),
      report,
      // after the report in its block: a deposit, a plain transfer and a burn
      log(10n, 3, 'UserDeposit', { depositor: B, recipient: B, amount: 22n }),
      log(10n, 3, 'Transfer', { from: ZERO_ADDRESS, to: B, value: 20n }),
      log(10n, 4, 'Transfer', { from: B, to: A, value: 5n }),
      log(10n, 5, 'Transfer', { from: A, to: ZERO_ADDRESS, value: 3n }),
    ]
    expect(reportTxState(report, logs, reads)).toEqual({
      totalUnderlyingSupply: 1_000n - 22n,
      totalSupply: 900n - 20n + 3n,
      globalFee: 1_000n,
    })
  })

  test('behavior: the fee is the one in force at the report, whatever the block sets after it', () => {
    const after = log(10n, 3, 'SetGlobalFee', { fee: 2_000n })
    const before = log(10n, 1, 'SetGlobalFee', { fee: 1_500n })
    expect(feeChangesAfterReport(report, [report])).toBe(false)
    expect(feeChangesAfterReport(report, [before, report])).toBe(false)
    expect(feeChangesAfterReport(report, [report, after])).toBe(true)
    // block end 2000 (set after the report): the previous block's fee, or the one set before the report
    const endReads = { ...reads, globalFee: 2_000n, globalFeeBeforeBlock: 1_200n }
    expect(reportTxState(report, [report, after], endReads).globalFee).toBe(1_200n)
    expect(reportTxState(report, [before, report, after], endReads).globalFee).toBe(1_500n)
    expect(() => reportTxState(report, [report, after], { ...reads, globalFee: 2_000n })).toThrow(
      /previous block's fee is needed/,
    )
  })
})
