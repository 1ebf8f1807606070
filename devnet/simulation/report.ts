/**
 * The daily oracle report: advances the consensus model, credits the consensus-layer withdrawals and
 * execution-layer fees without transactions (as on mainnet), mines `reportConsensusLayerData`, records the
 * outcome and rewrites the consensus facts file.
 */
import { renameSync, writeFileSync } from 'node:fs'
import { type Address, encodeFunctionData, type Log, parseEventLogs } from 'viem'
import { redeemManagerAbi, riverAbi } from '../../chain/abi.ts'
import { devnetOracleAbi } from '../abi.ts'
import type { ConsensusFacts } from '../consensus.ts'
import { mine } from './ledger.ts'
import type { ReportRecord, SimulationContext } from './state.ts'
import { call, GAS } from './transactions.ts'

/**
 * Mines the oracle report of `day` at its report time and returns its record (also kept in `ctx.reports`);
 * the next day to simulate becomes `day + 1`.
 */
export async function mineReport(ctx: SimulationContext, day: number, date: string): Promise<ReportRecord> {
  const { timeline, consensusModel, publicClient, testClient, logger } = ctx
  const { contracts, roles } = ctx.deployment
  const readBalance = (address: Address) => publicClient.getBalance({ address })
  const timestamp = timeline.reportTime(day)
  const epoch = timeline.epochAt(timestamp)
  const slashing = day === ctx.lossDay
  const outcome = consensusModel.advance({ day, date, timestamp, epoch, slashing })
  ctx.factsHistory.push(outcome.facts)
  const rebalance = ctx.reportRng.chance(ctx.behavior.rebalanceDepositToRedeem)
  // consensus-layer withdrawals and block rewards are credited without transactions, as on mainnet
  const [withdrawBalance, feeBalance] = await Promise.all([
    readBalance(contracts.withdraw),
    readBalance(contracts.elFeeRecipient),
  ])
  await Promise.all([
    outcome.withdrawalCredit > 0n
      ? testClient.setBalance({
          address: contracts.withdraw,
          value: withdrawBalance + outcome.withdrawalCredit,
        })
      : undefined,
    outcome.elFees > 0n
      ? testClient.setBalance({ address: contracts.elFeeRecipient, value: feeBalance + outcome.elFees })
      : undefined,
  ])
  const reportArgs = {
    epoch,
    validatorsBalance: outcome.validatorsBalance,
    validatorsSkimmedBalance: outcome.validatorsSkimmedBalance,
    validatorsExitedBalance: outcome.validatorsExitedBalance,
    validatorsExitingBalance: outcome.validatorsExitingBalance,
    validatorsCount: outcome.validatorsCount,
    stoppedValidatorCountPerOperator: outcome.stoppedValidatorCountPerOperator,
    rebalanceDepositToRedeemMode: rebalance,
    slashingContainmentMode: slashing,
  }
  const [block] = await mine(
    ctx,
    [
      call(
        roles.oracleMember,
        contracts.oracle,
        encodeFunctionData({
          abi: devnetOracleAbi,
          functionName: 'reportConsensusLayerData',
          args: [reportArgs],
        }),
        GAS.report,
        `oracle report of ${date}`,
      ),
    ],
    timestamp,
  )
  if (!block) throw new Error(`report of ${date} mined no block`)
  const receipt = block.receipts[0]
  const parsed = parseEventLogs({
    abi: [...riverAbi, ...redeemManagerAbi],
    logs: (receipt?.logs ?? []) as unknown as Log[],
  })
  let trace:
    | { rewards: bigint; pulledELFees: bigint; pulledRedeemManagerExceedingEthBuffer: bigint }
    | undefined
  let feeShares = 0n
  let withdrawalEventId: number | undefined
  for (const log of parsed) {
    if (log.eventName === 'ProcessedConsensusLayerReport') trace = log.args.trace
    if (log.eventName === 'RewardsEarned') feeShares = log.args.newTotalSupply - log.args.oldTotalSupply
    if (log.eventName === 'ReportedWithdrawal') withdrawalEventId = log.args.id
  }
  if (!trace) throw new Error(`report of ${date} emitted no ProcessedConsensusLayerReport`)
  const atBlock = (functionName: 'totalUnderlyingSupply' | 'totalSupply' | 'getGlobalFee') =>
    publicClient.readContract({
      address: contracts.river,
      abi: riverAbi,
      functionName,
      blockNumber: block.number,
    })
  const [totalUnderlyingSupply, totalSupply, fee] = await Promise.all([
    atBlock('totalUnderlyingSupply'),
    atBlock('totalSupply'),
    atBlock('getGlobalFee'),
  ])
  ctx.globalFee = fee
  const record: ReportRecord = {
    day,
    date,
    blockNumber: block.number,
    blockHash: block.hash,
    timestamp,
    epoch,
    rewards: trace.rewards,
    pulledELFees: trace.pulledELFees,
    pulledExceedingEth: trace.pulledRedeemManagerExceedingEthBuffer,
    feeShares,
    globalFee: ctx.globalFee,
    totalUnderlyingSupply,
    totalSupply,
    validatorsCount: outcome.validatorsCount,
    stoppedValidatorCount: outcome.stoppedValidatorCountPerOperator[0] ?? 0,
    withdrawalEventId,
    slashing,
    rebalanceDepositToRedeemMode: rebalance,
  }
  ctx.reports.push(record)
  ctx.nextDay = day + 1
  if (ctx.consensusFile) writeConsensusFile(ctx.consensusFile, ctx.factsHistory)
  logger?.debug(
    {
      day,
      date,
      block_number: Number(block.number),
      rewards_wei: trace.rewards.toString(),
      fee_shares: feeShares.toString(),
      validators: outcome.validatorsCount,
    },
    'devnet report mined',
  )
  return record
}

/**
 * Rewrites the consensus facts file (README: `latest` and every day so far), atomically.
 *
 * @example
 * writeConsensusFile('./data/devnet-consensus.json', simulator.consensusHistory())
 */
export function writeConsensusFile(file: string, factsHistory: readonly ConsensusFacts[]): void {
  const days = factsHistory.map((f) => ({
    day: f.day,
    date: f.date,
    timestamp: Number(f.timestamp),
    epoch: Number(f.epoch),
    total_active_balance_wei: f.totalActiveBalance.toString(),
    active_validator_count: f.activeValidatorCount,
    exit_queue_wei: f.exitQueue.toString(),
    sweep_period_days: f.sweepPeriodDays,
    protocol_active_validators: f.protocolActiveValidators,
    protocol_exiting_balance_wei: f.protocolExitingBalance.toString(),
  }))
  const body = { latest: days[days.length - 1] ?? null, days }
  writeFileSync(`${file}.tmp`, `${JSON.stringify(body, null, 1)}\n`)
  renameSync(`${file}.tmp`, file)
}
