import { describe, expect, test } from 'vitest'
import type { DecodedLog } from './log-decoding.ts'
import {
  bookedReportOf,
  type ConsensusLayerReport,
  type OracleVote,
  oracleVoteOf,
  reportDifferences,
  votesFor,
} from './oracle-votes.ts'

const MEMBER = '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65'

const report: ConsensusLayerReport = {
  epoch: 439_650n,
  validatorsBalance: 640_187_287_352_284_931_459n,
  validatorsSkimmedBalance: 1n,
  validatorsExitedBalance: 0n,
  validatorsExitingBalance: 0n,
  validatorsCount: 20,
  stoppedValidatorCountPerOperator: [0, 0],
  rebalanceDepositToRedeemMode: false,
  slashingContainmentMode: false,
}

/** A decoded log at (block, index) with `eventName` and `args` (the fields the module reads). */
function log(blockNumber: bigint, logIndex: number, eventName: string, args: unknown): DecodedLog {
  return {
    blockNumber,
    logIndex,
    transactionHash: `0x${'ab'.repeat(32)}`,
    eventName,
    args,
  } as unknown as DecodedLog
}

describe('oracleVoteOf and bookedReportOf', () => {
  test('behavior: a 1.x vote and the booked report compare on the struct; only the differing fields come out', () => {
    const booked = bookedReportOf(log(39n, 23, 'ProcessedConsensusLayerReport', { report, trace: {} }))!
    const voted = { ...report, validatorsBalance: report.validatorsBalance + report.validatorsBalance / 10n }
    const vote = oracleVoteOf(log(39n, 2, 'ReportedConsensusLayerData', { member: MEMBER, report: voted }))!
    expect(vote).toMatchObject({ shape: 'v1', member: MEMBER, epoch: 439_650n, report: voted })
    expect(reportDifferences(booked, vote)).toEqual({
      validators_balance: { booked: '640187287352284931459', voted: '704206016087513424604' },
    })
    const same = oracleVoteOf(log(39n, 3, 'ReportedConsensusLayerData', { member: MEMBER, report }))!
    expect(reportDifferences(booked, same)).toEqual({})
  })

  test('behavior: a 0.4.0 vote (CLReported) compares with River 0.4/0.5’s ConsensusLayerDataUpdate on epoch, balance and count', () => {
    const roundId = `0x${101_250n.toString(16).padStart(64, '0')}`
    const booked = bookedReportOf(
      log(7n, 5, 'ConsensusLayerDataUpdate', {
        validatorCount: 3n,
        validatorTotalBalance: 96n * 10n ** 18n,
        roundId,
      }),
    )!
    expect(booked.epoch).toBe(101_250n)
    const vote = oracleVoteOf(
      log(6n, 1, 'CLReported', {
        epochId: 101_250n,
        newCLBalance: 96n * 10n ** 18n + 10n ** 9n,
        newCLValidatorCount: 3,
        oracleMember: MEMBER,
      }),
    )!
    expect(vote).toMatchObject({ shape: 'legacy', member: MEMBER })
    expect(reportDifferences(booked, vote)).toEqual({
      validators_balance: { booked: '96000000000000000000', voted: '96000000001000000000' },
    })
    expect(oracleVoteOf(log(6n, 2, 'PostTotalShares', {}))).toBeUndefined()
    expect(bookedReportOf(log(6n, 2, 'Transfer', {}))).toBeUndefined()
  })
})

describe('votesFor', () => {
  test('behavior: a report’s votes are those after the previous report up to its own log, the same block included', () => {
    const at = (blockNumber: bigint, logIndex: number) => ({ blockNumber, logIndex }) as OracleVote
    const votes = [at(10n, 4), at(12n, 1), at(15n, 2), at(15n, 3), at(15n, 30)]
    expect(votesFor(votes, { blockNumber: 10n, logIndex: 9 }, { blockNumber: 15n, logIndex: 20 })).toEqual([
      at(12n, 1),
      at(15n, 2),
      at(15n, 3),
    ])
    expect(votesFor(votes, undefined, { blockNumber: 12n, logIndex: 0 })).toEqual([at(10n, 4)])
  })
})
