/**
 * The hand-driven test chain on the protocol's own bytecode (`startTestChain`, testing.ts): the launch, the
 * stake a test asks for made on River 0.4.0 as mainnet's first deposits were (its deposit buffer staked by the
 * admin, no report needed), then, for a `current` chain, every release up to 1.2.1. For hand-written reports
 * the chain's Oracle takes one vote (quorum 1) and River's bounds are wide (a test's reports move a small pool
 * by tenths of an ETH a frame); everything else is as deployProtocolDevnet leaves it.
 */
import { type Address, encodeFunctionData, type PublicClient, type TestClient } from 'viem'
import { allowlistLegacyAbi, PERMISSION } from '../chain/abi.ts'
import type { BlockBuilder, TxRequest } from './blocks.ts'
import type { DevnetDeployment } from './deployment.ts'
import { implementationArtifact, protocolCode } from './protocol-code.ts'
import { deployProtocolDevnet } from './protocol-deploy.ts'
import { RELEASES } from './protocol-layout.ts'
import { protocolVersionPlan, releaseTxs } from './protocol-release-txs.ts'
import { keeperDepositTxs } from './simulation/protocol-keeper.ts'
import { type HistoryKind, type UpgradeDays, versionPlan } from './versions.ts'

/** What a test chain stakes at launch: deposits into River, other accounts allowlisted, validators staked. */
export interface TestChainStake {
  /** depositors and amounts (each funded with 1000 ETH and allowlisted to deposit and redeem) */
  deposits: readonly (readonly [Address, bigint])[]
  /** accounts allowlisted (and funded) without depositing */
  others?: readonly Address[]
  /** validators the admin stakes from the deposit buffer (default 4) */
  validators?: number
}

/** River's bounds on a hand-driven chain: 10,000 %/yr of growth, 50 % of loss. */
const TEST_REPORT_BOUNDS = { annualAprUpperBound: 1_000_000n, relativeLowerBound: 5_000n }
const FAR_DAYS: UpgradeDays = { v05Day: 100_000, v1Day: 100_001, v12Day: 100_002 }

/**
 * Deploys the protocol's code for a hand-driven test chain (see the file's comment) and returns its
 * deployment. A `versioned` chain stays on the launch versions (its test upgrades by hand).
 */
export async function deployProtocolTestChain(args: {
  publicClient: PublicClient
  testClient: TestClient
  builder: BlockBuilder
  timestamp: bigint
  history: HistoryKind
  stake?: TestChainStake | undefined
}): Promise<DevnetDeployment> {
  const { publicClient, testClient, builder } = args
  const deployment = await deployProtocolDevnet({
    publicClient,
    testClient,
    builder,
    timestamp: args.timestamp,
    plan: versionPlan('versioned', FAR_DAYS),
  })
  const mine = async (txs: TxRequest[]) => {
    if (txs.length > 0) await builder.mine(txs, builder.lastTimestamp() + 12n)
  }
  const staked = args.stake ? await stakeAtLaunch(deployment, testClient, builder, args.stake) : 0
  if (args.history === 'versioned') return deployment
  const protocol = deployment.protocol
  if (!protocol) throw new Error('not a protocol deployment')
  await mine(RELEASES.flatMap((release) => releaseTxs(deployment, release, { fundedKeys: BigInt(staked) })))
  const { roles, contracts } = deployment
  const admin = (to: Address, artifact: string, functionName: string, fnArgs: unknown[]): TxRequest => ({
    from: roles.admin,
    to,
    data: encodeFunctionData({ abi: protocolCode(artifact).abi, functionName, args: fnArgs } as never),
    gas: 500_000n,
    label: `${functionName} (test chain)`,
  })
  await mine([
    admin(contracts.oracle, implementationArtifact('Oracle', '1.2.1'), 'setQuorum', [1n]),
    admin(contracts.river, implementationArtifact('River', '1.2.1'), 'setReportBounds', [TEST_REPORT_BOUNDS]),
  ])
  const plan = protocolVersionPlan('current', protocol.releaseDays)
  return { ...deployment, plan }
}

/**
 * Funds and allowlists the stake's accounts (0.4.0's `allow` through the firewall), mines the deposits, then
 * the keys, limits and the admin's deposit of the validators; returns how many were staked.
 */
async function stakeAtLaunch(
  deployment: DevnetDeployment,
  testClient: TestClient,
  builder: BlockBuilder,
  stake: TestChainStake,
): Promise<number> {
  const { contracts, roles } = deployment
  const accounts = [...stake.deposits.map(([account]) => account), ...(stake.others ?? [])]
  for (const account of accounts)
    await testClient.setBalance({ address: account, value: 1_000n * 10n ** 18n })
  const mine = (txs: TxRequest[]) => builder.mine(txs, builder.lastTimestamp() + 12n)
  await mine([
    {
      from: roles.simulatorAllower,
      to: contracts.firewall,
      data: encodeFunctionData({
        abi: allowlistLegacyAbi,
        functionName: 'allow',
        args: [accounts, accounts.map(() => PERMISSION.DEPOSIT | PERMISSION.REDEEM)],
      }),
      gas: 1_000_000n,
      label: 'allow the stake accounts',
    },
  ])
  const riverAbi = protocolCode(implementationArtifact('River', '0.4.0')).abi
  await mine(
    stake.deposits.map(([account, amount]) => ({
      from: account,
      to: contracts.river,
      data: encodeFunctionData({ abi: riverAbi, functionName: 'deposit' }),
      value: amount,
      gas: 300_000n,
      label: `deposit by ${account}`,
    })),
  )
  const validators = stake.validators ?? 4
  const state = {
    deployment,
    versions: { river: '0.4.0', operatorsRegistry: '0.4.0' } as const,
    fundedKeys: deployment.operators.map(() => 0),
    addedKeys: deployment.operators.map(() => 0),
  }
  await mine(keeperDepositTxs(state, [0], BigInt(validators), builder.lastBlockNumber()))
  return validators
}
