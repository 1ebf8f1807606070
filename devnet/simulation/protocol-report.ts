/**
 * The oracle members' report transactions on the protocol's own bytecode: three members, a quorum of two.
 * On a dissent day the third member reports first, one gwei off, and the other two form the quorum after it.
 * The epoch is the first of the report's frame (225 epochs: a day), which both the 0.4 Oracle (the current
 * frame's first epoch) and 1.x River (a multiple of the frame, past finality) require.
 */
import { encodeFunctionData, type Hex } from 'viem'
import type { TxRequest } from '../blocks.ts'
import type { ConsensusDay } from '../consensus.ts'
import { implementationArtifact, protocolCode } from '../protocol-code.ts'
import { CL_SPEC } from '../protocol-releases.ts'
import { atLeast } from '../versions.ts'
import { isRefusedReportDay } from './protocol-events.ts'
import type { SimulationContext } from './state.ts'
import { call, GAS } from './transactions.ts'

const GWEI = 10n ** 9n

/** Whether the third member dissents on `day` (every ninth day from day 4). */
export const isDissentDay = (day: number): boolean => day % 9 === 4

/**
 * The epoch a report at `currentEpoch` is for: the first epoch of the current frame.
 *
 * @example
 * frameEpoch(101_474n) // 101_250n
 */
export const frameEpoch = (currentEpoch: bigint): bigint =>
  (currentEpoch / CL_SPEC.epochsPerFrame) * CL_SPEC.epochsPerFrame

/**
 * The balance a legacy (0.4 Oracle) report carries, in wei, gwei-rounded: after Shanghai the skims and
 * withdrawals so far count in it (they wait in the Withdraw contract, out of River, until the first 1.x
 * report pulls them), so a sweep is no loss.
 *
 * @example
 * legacyReportedBalance(outcome) // floor((validatorsBalance + skimmed + exited) / 1 gwei) gwei
 */
export const legacyReportedBalance = (outcome: ConsensusDay): bigint =>
  ((outcome.validatorsBalance + outcome.validatorsSkimmedBalance + outcome.validatorsExitedBalance) / GWEI) *
  GWEI

/** What the members report (1.x's struct fields; the 0.4 Oracle takes the balance in gwei and the count). */
export interface MemberReport {
  epoch: bigint
  outcome: ConsensusDay
  rebalance: boolean
  slashing: boolean
}

/** The calldata of one member's report, `balanceOffset` wei off the true balance (a dissenting member). */
function reportData(ctx: SimulationContext, report: MemberReport, balanceOffset: bigint): Hex {
  const oracle = ctx.versions.oracle ?? '0.4.0'
  const abi = protocolCode(implementationArtifact('Oracle', oracle)).abi
  const { outcome } = report
  if (!atLeast(oracle, '1.0.0')) {
    return encodeFunctionData({
      abi,
      functionName: 'reportConsensusLayerData',
      args: [report.epoch, (legacyReportedBalance(outcome) + balanceOffset) / GWEI, outcome.validatorsCount],
    } as never)
  }
  const balance = outcome.validatorsBalance + balanceOffset
  return encodeFunctionData({
    abi,
    functionName: 'reportConsensusLayerData',
    args: [
      {
        epoch: report.epoch,
        validatorsBalance: balance,
        validatorsSkimmedBalance: outcome.validatorsSkimmedBalance,
        validatorsExitedBalance: outcome.validatorsExitedBalance,
        validatorsExitingBalance: outcome.validatorsExitingBalance,
        validatorsCount: outcome.validatorsCount,
        stoppedValidatorCountPerOperator: outcome.stoppedValidatorCountPerOperator,
        rebalanceDepositToRedeemMode: report.rebalance,
        slashingContainmentMode: report.slashing,
      },
    ],
  } as never)
}

/**
 * The members' transactions of a report, in sending order: the dissenter first on a dissent day, then the
 * two members whose agreement forms the quorum (the second one's transaction runs River's report).
 */
export function memberReportTxs(
  ctx: SimulationContext,
  day: number,
  date: string,
  report: MemberReport,
): TxRequest[] {
  const members = ctx.deployment.protocol.oracleMembers
  if (members.length < 3) throw new Error('the protocol deployment has no three oracle members')
  const [first, second, third] = members as [Hex, Hex, Hex]
  const agreed = reportData(ctx, report, 0n)
  const oracle = ctx.deployment.contracts.oracle
  if (isRefusedReportDay(ctx, day)) {
    // two members agree on a balance far above the bound: the second vote forms the quorum, River refuses
    // the report and the vote reverts; the second and third members then agree on the true report
    const refused = reportData(ctx, report, report.outcome.validatorsBalance / 10n)
    return [
      call(first, oracle, refused, GAS.report, `out-of-bounds report of ${date}`),
      { ...call(second, oracle, refused, GAS.report, `refused report of ${date}`), expectRevert: true },
      call(second, oracle, agreed, GAS.report, `member report of ${date}`),
      call(third, oracle, agreed, GAS.report, `oracle report of ${date}`),
    ]
  }
  const txs: TxRequest[] = []
  if (isDissentDay(day)) {
    txs.push(
      call(
        third,
        ctx.deployment.contracts.oracle,
        reportData(ctx, report, GWEI),
        GAS.report,
        `dissenting report of ${date}`,
      ),
    )
  }
  txs.push(call(first, ctx.deployment.contracts.oracle, agreed, GAS.report, `member report of ${date}`))
  txs.push(call(second, ctx.deployment.contracts.oracle, agreed, GAS.report, `oracle report of ${date}`))
  return txs
}
