import type { Address } from 'viem'
import { type ReportInput, riverCall, type TestChain } from '../../devnet/testing.ts'

/**
 * What the tests on a bare test chain (`startTestChain`) share: a pool to grow (deposits staked on four
 * validators) and the oracle reports that grow it.
 */

/**
 * A sequence of oracle reports: each call gives the next epoch (225 later, from 400_225: well before the
 * chain's time) unless `sameEpoch` (a report re-mined on another branch), four validators holding
 * `validatorsBalance`, nothing skimmed, exited or stopped.
 *
 * @example
 * const reportInput = reportSequence()
 * await chain.report(reportInput(128n * ETH + parseEther('0.1')))
 */
export function reportSequence(
  start = 400_000n,
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

/**
 * Funds (1000 ETH each) and allowlists the depositors and `others`, mines the River deposits in one block and
 * has the keeper stake four validators (128 ETH) in the next: the pool a report's validators balance is
 * measured against.
 */
export async function depositAndStake(
  chain: TestChain,
  deposits: readonly [Address, bigint][],
  others: readonly Address[] = [],
): Promise<void> {
  const accounts = [...deposits.map(([account]) => account), ...others]
  for (const account of accounts) await chain.fund(account, 1_000n * 10n ** 18n)
  await chain.allow(accounts)
  await chain.mine(deposits.map(([account, amount]) => chain.riverTx(account, riverCall.deposit(), amount)))
  await chain.mine([
    {
      from: chain.deployment.roles.keeper,
      to: chain.deployment.contracts.river,
      data: riverCall.depositToConsensusLayer(4n),
      gas: 500_000n,
      label: 'keeper deposit',
    },
  ])
}
