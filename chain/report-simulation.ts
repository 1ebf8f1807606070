/**
 * Would River 1.x book this report? An `eth_call` of River's `setConsensusLayerData(report)` from the Oracle's
 * address (the only sender River takes a report from) at a given block: it answers, or it reverts with the
 * reason River refuses it (its report bounds, an epoch, a validator count), decoded with River's and the
 * OperatorsRegistry's errors (River passes the stopped validator counts on to the registry). The follower's
 * vote check asks it for each 1.x vote that differs from the booked report (jobs/follower/oracle-votes.ts).
 */
import { BaseError, ContractFunctionRevertedError, parseAbi } from 'viem'
import type { Address } from '../common/address.ts'
import type { ChainClient } from './client.ts'
import type { ConsensusLayerReport } from './oracle-votes.ts'
import { type RetryOptions, withRetry } from './retry.ts'
import { shortMessage } from './rpc-values.ts'

/**
 * River 1.x's report entry point, with the errors a report can revert with: River's (1.0.0 to 1.2.1) and the
 * OperatorsRegistry's stopped-count checks (1.0.0 on). `chain/report-simulation.test.ts` holds each to the
 * real ABIs (fixtures/protocol).
 */
export const riverReportAbi = parseAbi([
  'struct ConsensusLayerReport { uint256 epoch; uint256 validatorsBalance; uint256 validatorsSkimmedBalance; uint256 validatorsExitedBalance; uint256 validatorsExitingBalance; uint32 validatorsCount; uint32[] stoppedValidatorCountPerOperator; bool rebalanceDepositToRedeemMode; bool slashingContainmentMode; }',
  'function setConsensusLayerData(ConsensusLayerReport report)',
  'error Unauthorized(address caller)',
  'error InvalidEpoch(uint256 epoch)',
  'error InvalidValidatorCountReport(uint256 providedValidatorCount, uint256 depositedValidatorCount, uint256 lastReportedValidatorCount)',
  'error InvalidDecreasingValidatorsExitedBalance(uint256 currentValidatorsExitedBalance, uint256 newValidatorsExitedBalance)',
  'error InvalidDecreasingValidatorsSkimmedBalance(uint256 currentValidatorsSkimmedBalance, uint256 newValidatorsSkimmedBalance)',
  'error TotalValidatorBalanceIncreaseOutOfBound(uint256 prevTotalEthIncludingExited, uint256 postTotalEthIncludingExited, uint256 timeElapsed, uint256 annualAprUpperBound)',
  'error TotalValidatorBalanceDecreaseOutOfBound(uint256 prevTotalEthIncludingExited, uint256 postTotalEthIncludingExited, uint256 timeElapsed, uint256 relativeLowerBound)',
  'error InvalidPulledClFundsAmount(uint256 requested, uint256 received)',
  'error ZeroMintedShares()',
  'error NotEnoughFunds()',
  'error InvalidCall()',
  'error InvalidArgument()',
  'error InvalidEmptyStoppedValidatorCountsArray()',
  'error InvalidStoppedValidatorCountsSum()',
  'error StoppedValidatorCountAboveFundedCount(uint256 operatorIndex, uint32 stoppedCount, uint32 fundedCount)',
  'error StoppedValidatorCountArrayShrinking()',
  'error StoppedValidatorCountsDecreased()',
  'error StoppedValidatorCountsTooHigh()',
])

/**
 * What River says to a report: `accepted` (the call answered), `refused` with the revert in words, or
 * `failed` when the node did not answer the call (the RPC error's short text).
 */
export type ReportSimulation =
  | { outcome: 'accepted' }
  | { outcome: 'refused'; reason: string }
  | { outcome: 'failed'; error: string }

/**
 * A revert in words: `Name(arg: value, ...)` for a decoded custom error (`Error` and `Panic` included), else
 * `unknown custom error 0x<selector>` or `reverted without a reason`; undefined when `err` is no revert (an RPC
 * failure).
 *
 * @example
 * refusalOf(err) // 'TotalValidatorBalanceIncreaseOutOfBound(prevTotalEthIncludingExited: 642..., postTotalEthIncludingExited: 706..., timeElapsed: 86400, annualAprUpperBound: 1000)'
 */
export function refusalOf(err: unknown): string | undefined {
  if (!(err instanceof BaseError)) return undefined
  const revert = err.walk((e) => e instanceof ContractFunctionRevertedError)
  if (!(revert instanceof ContractFunctionRevertedError)) return undefined
  if (revert.data) {
    const item = revert.data.abiItem
    const inputs = 'inputs' in item ? item.inputs : []
    const args = (revert.data.args ?? []).map((value, i) => {
      const name = inputs[i]?.name
      return name ? `${name}: ${String(value)}` : String(value)
    })
    return `${revert.data.errorName}(${args.join(', ')})`
  }
  if (revert.signature) return `unknown custom error ${revert.signature}`
  if (revert.reason) return `Error(${revert.reason})`
  return 'reverted without a reason'
}

/**
 * Simulates River's `setConsensusLayerData(report)` sent by the Oracle (`oracle`) at the end of `blockNumber`
 * (eth_call; nothing is sent). Transient RPC errors are retried (`retry`, default two retries); what remains
 * of an RPC failure comes back as `failed`, never thrown.
 *
 * @example
 * await simulateRiverReport(client, { river, oracle, report, blockNumber: 38n })
 * // { outcome: 'refused', reason: 'TotalValidatorBalanceIncreaseOutOfBound(...)' }
 */
export async function simulateRiverReport(
  client: ChainClient,
  call: { river: Address; oracle: Address; report: ConsensusLayerReport; blockNumber: bigint },
  retry: RetryOptions = { retries: 2 },
): Promise<ReportSimulation> {
  try {
    await withRetry(
      () =>
        client.simulateContract({
          account: call.oracle,
          address: call.river,
          abi: riverReportAbi,
          functionName: 'setConsensusLayerData',
          args: [call.report],
          blockNumber: call.blockNumber,
        }),
      retry,
    )
    return { outcome: 'accepted' }
  } catch (err) {
    const reason = refusalOf(err)
    return reason === undefined
      ? { outcome: 'failed', error: shortMessage(err) }
      : { outcome: 'refused', reason }
  }
}
