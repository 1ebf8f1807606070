import type { ReportInput } from '../../devnet/testing.ts'

/**
 * What the tests on a bare test chain (`startTestChain`, its pool staked at launch with `stake`) share: the
 * oracle reports that grow the pool.
 */

/**
 * A sequence of oracle reports: each call gives the next frame's first epoch (225 later, from 400_275, a
 * multiple of the 225-epoch frame as the protocol requires: well before the chain's time) unless `sameEpoch` (a report re-mined on another branch), four validators holding
 * `validatorsBalance`, nothing skimmed, exited or stopped.
 *
 * @example
 * const reportInput = reportSequence()
 * await chain.report(reportInput(128n * ETH + parseEther('0.1')))
 */
export function reportSequence(
  start = 400_050n,
): (validatorsBalance: bigint, sameEpoch?: boolean) => ReportInput {
  let epoch = start
  return (validatorsBalance, sameEpoch = false) => {
    if (!sameEpoch) epoch += 225n
    return {
      epoch,
      validatorsBalance,
      validatorsSkimmedBalance: 0n,
      validatorsExitedBalance: 0n,
      validatorsExitingBalance: 0n,
      validatorsCount: 4,
      stoppedValidatorCountPerOperator: [0, 0, 0, 0, 0, 0],
      rebalanceDepositToRedeemMode: false,
      slashingContainmentMode: false,
    }
  }
}
