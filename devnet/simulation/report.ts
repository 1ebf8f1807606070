/**
 * The daily oracle report: advances the consensus model, credits the consensus-layer withdrawals and
 * execution-layer fees without transactions (as on mainnet), mines `reportConsensusLayerData`, records the
 * outcome and rewrites the consensus facts file.
 */
import { renameSync, writeFileSync } from 'node:fs'
import { type Address, type Log, parseEventLogs } from 'viem'
import { oracleLegacyAbi, redeemManagerAbi, riverAbi, riverLegacyAbi } from '../../chain/abi.ts'
import { type ConsensusDay, type ConsensusFacts, DEPOSIT_SIZE } from '../consensus.ts'
import { atLeast } from '../versions.ts'
import { mine } from './ledger.ts'
import { minePrices } from './prices.ts'
import { elFeeSpike, isLossDay } from './protocol-events.ts'
import { frameEpoch, legacyReportedBalance, memberReportTxs } from './protocol-report.ts'
import type { ReportRecord, SimulationContext } from './state.ts'

/**
 * Mines the oracle report of `day` at its report time and returns its record (also kept in `ctx.reports`);
 * the next day to simulate becomes `day + 1`.
 */
export async function mineReport(ctx: SimulationContext, day: number, date: string): Promise<ReportRecord> {
  const { timeline, consensusModel, publicClient, testClient, logger } = ctx
  const { contracts } = ctx.deployment
  const readBalance = (address: Address) => publicClient.getBalance({ address })
  const timestamp = timeline.reportTime(day)
  // the Oracle takes the first epoch of the report's frame
  const epoch = frameEpoch(timeline.epochAt(timestamp))
  const slashing = isLossDay(ctx, day)
  const riverVersion = ctx.versions.river
  if (!riverVersion) throw new Error('River has no version')
  const legacy = !atLeast(ctx.versions.oracle, '1.0.0')
  // before River 1.0.0 (Shanghai) nothing leaves the consensus layer: no sweeps, no withdrawals
  const withdrawals = atLeast(riverVersion, '1.0.0')
  // on the protocol's bytecode, skims start at Shanghai, before River 1.0.0 (they wait in Withdraw until then)
  const skims = withdrawals || day >= ctx.shanghaiDay
  const outcome = consensusModel.advance({ day, date, timestamp, epoch, slashing, withdrawals, skims })
  ctx.factsHistory.push(outcome.facts)
  const rebalance = ctx.reportRng.chance(ctx.behavior.rebalanceDepositToRedeem)
  // consensus-layer withdrawals and block rewards are credited without transactions, as on mainnet
  const [withdrawBalance, feeBalance] = await Promise.all([
    readBalance(contracts.withdraw),
    readBalance(contracts.elFeeRecipient),
  ])
  const spike = await elFeeSpike(ctx, day)
  const elFees = outcome.elFees + spike
  await Promise.all([
    outcome.withdrawalCredit > 0n
      ? testClient.setBalance({
          address: contracts.withdraw,
          value: withdrawBalance + outcome.withdrawalCredit,
        })
      : undefined,
    elFees > 0n
      ? testClient.setBalance({ address: contracts.elFeeRecipient, value: feeBalance + elFees })
      : undefined,
  ])
  // the day's ETH prices, in a block of their own before the report's: the report's block reads them
  const prices = await minePrices(ctx, day, date, timestamp)
  const txs = memberReportTxs(ctx, day, date, { epoch, outcome, rebalance, slashing })
  const [block] = await mine(ctx, txs, timestamp)
  if (!block) throw new Error(`report of ${date} mined no block`)
  const logs = block.receipts.flatMap((r) => r.logs) as unknown as Log[]
  const trace = legacy
    ? await legacyTrace(ctx, logs, outcome, block.number, date)
    : processedTrace(logs, date)
  let feeShares = 0n
  let withdrawalEventId: number | undefined
  for (const log of parseEventLogs({ abi: [...riverAbi, ...redeemManagerAbi], logs })) {
    if (log.eventName === 'RewardsEarned') feeShares = log.args.newTotalSupply - log.args.oldTotalSupply
    if (log.eventName === 'ReportedWithdrawal') withdrawalEventId = log.args.id
  }
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
    rebalanceDepositToRedeemMode: legacy ? false : rebalance,
    riverVersion,
    prices,
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

interface Trace {
  rewards: bigint
  pulledELFees: bigint
  pulledRedeemManagerExceedingEthBuffer: bigint
}

/** The trace of a 1.x report, from its ProcessedConsensusLayerReport. */
function processedTrace(logs: Log[], date: string): Trace {
  for (const log of parseEventLogs({ abi: riverAbi, logs })) {
    if (log.eventName === 'ProcessedConsensusLayerReport') return log.args.trace
  }
  throw new Error(`report of ${date} emitted no ProcessedConsensusLayerReport`)
}

/**
 * The trace of a 0.4 / 0.5 report, which has none: the EL fees from PulledELFees; the rewards as River computes
 * them (new balance + EL fees - previous balance - 32 ETH x newly seen validators, 0 on a loss), from the stored
 * report before the block; checks the Oracle's CLReported and PostTotalShares and River's ConsensusLayerDataUpdate.
 */
async function legacyTrace(
  ctx: SimulationContext,
  logs: Log[],
  outcome: ConsensusDay,
  blockNumber: bigint,
  date: string,
): Promise<Trace> {
  const { contracts } = ctx.deployment
  const read = (functionName: 'getCLValidatorTotalBalance' | 'getCLValidatorCount') =>
    ctx.publicClient.readContract({
      address: contracts.river,
      abi: riverLegacyAbi,
      functionName,
      blockNumber: blockNumber - 1n,
    })
  const [previousBalance, previousCount] = await Promise.all([
    read('getCLValidatorTotalBalance'),
    read('getCLValidatorCount'),
  ])
  const balance = legacyReportedBalance(outcome)
  let pulledELFees: bigint | undefined
  let update: { validatorCount: bigint; validatorTotalBalance: bigint } | undefined
  let posted = false
  for (const log of parseEventLogs({ abi: [...riverAbi, ...riverLegacyAbi, ...oracleLegacyAbi], logs })) {
    if (log.eventName === 'PulledELFees') pulledELFees = log.args.amount
    if (log.eventName === 'ConsensusLayerDataUpdate') update = log.args
    if (log.eventName === 'PostTotalShares') posted = true
  }
  // River 0.5.0 emits PulledELFees only when it pulled some (0.4.0 also with 0 when it had room to pull)
  pulledELFees ??= 0n
  if (!update || !posted || pulledELFees === undefined) {
    throw new Error(`report of ${date} emitted no ConsensusLayerDataUpdate, PulledELFees or PostTotalShares`)
  }
  if (update.validatorTotalBalance !== balance || update.validatorCount !== BigInt(outcome.validatorsCount)) {
    throw new Error(
      `report of ${date}: ConsensusLayerDataUpdate does not carry the reported balance and count`,
    )
  }
  const previous = previousBalance + (BigInt(outcome.validatorsCount) - previousCount) * DEPOSIT_SIZE
  const rewards = balance + pulledELFees > previous ? balance + pulledELFees - previous : 0n
  return { rewards, pulledELFees, pulledRedeemManagerExceedingEthBuffer: 0n }
}

/**
 * Rewrites the consensus facts file (devnet/README.md: `latest` and every day so far), atomically.
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
