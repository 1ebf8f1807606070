import { type Address, encodeFunctionData, type Hex, type PublicClient, type TestClient } from 'viem'
import {
  devnetAllowlistAbi,
  devnetOracleAbi,
  devnetProxyAbi,
  devnetRedeemManagerAbi,
  devnetRiverAbi,
} from './abi.ts'
import { type DevRole, devRoles } from './accounts.ts'
import { type BlockBuilder, createBlockBuilder, type MinedBlock, type TxRequest } from './blocks.ts'
import { type Artifacts, loadArtifacts } from './compile.ts'
import {
  adminRequests,
  CALL_GAS,
  type Creation,
  DEPLOY_GAS,
  deployData,
  devnetOperators,
  ORACLE_SPEC,
  planLayout,
  priceFeedCreations,
  protocolCreations,
  wiringCalls,
} from './deploy-plan.ts'
import type { ProtocolLayout } from './protocol-layout.ts'
import {
  type ImplementationRecord,
  type ProxiedContract,
  type UpgradeStep,
  type VersionPlan,
  versionPlan,
} from './versions.ts'

export { DEVNET_OPERATOR_NAMES, EXECUTOR_SELECTORS } from './deploy-plan.ts'

/** Addresses of the deployed devnet contracts (the five proxied ones are their proxies). */
export interface DevnetContracts {
  river: Address
  /** in a versioned history, the address its proxy gets at the 1.0 upgrade (no code before) */
  redeemManager: Address
  allowlist: Address
  oracle: Address
  operatorsRegistry: Address
  /** the AllowlistFirewall: the Allowlist's allower and admin */
  firewall: Address
  elFeeRecipient: Address
  withdraw: Address
  depositContract: Address
  /** the CoverageFund's proxy (the protocol's own bytecode only) */
  coverageFund?: Address
  /** the ETH / USD PriceFeed (Chainlink-shaped, not a protocol contract; its owner is the admin) */
  usdPriceFeed: Address
  /** the ETH / EUR PriceFeed */
  eurPriceFeed: Address
}

/** What `deployDevnet` deployed: the addresses, the roles, the deploy block and the version history. */
export interface DevnetDeployment {
  contracts: DevnetContracts
  /** dev account address of each role (see accounts.ts) */
  roles: Record<DevRole, Address>
  /** the block holding every deployment and wiring transaction */
  deployBlock: bigint
  deployTimestamp: bigint
  operators: { name: string; address: Address }[]
  /** fee in basis points set at deployment */
  initialFee: number
  /** the versions of the history: initial version per proxy and the scheduled upgrades */
  plan: VersionPlan
  /**
   * Per proxy, every implementation it points at over the history, oldest first: the initial one (block =
   * deployBlock) and the planned ones (block null until the simulator mines the upgrade). Every
   * implementation is deployed in the deploy block.
   */
  implementations: Record<ProxiedContract, ImplementationRecord[]>
  /** the proxy admin's nonce before its first upgrade transaction (a later proxy's address derives from it) */
  proxyAdminNonce: number
  /** set when the devnet runs the protocol's own bytecode (protocol-deploy.ts): its proxies, firewalls, releases */
  protocol?: ProtocolLayout
}

/** What `deployDevnet` deploys on, when, and with which fee, artifacts and version plan. */
export interface DeployOptions {
  publicClient: PublicClient
  testClient: TestClient
  /** Timestamp of the deployment block (must be after the latest block). */
  timestamp: bigint
  initialFee?: number
  artifacts?: Artifacts
  /** Reuse a block builder (its nonce cache) instead of creating one. */
  builder?: BlockBuilder
  /** the versions of the history (default: `versionPlan('current')`, every proxy on 1.2.1, no upgrades) */
  plan?: VersionPlan
}

/**
 * Deploys and wires the devnet in one block, from the admin dev account: every implementation the plan
 * needs, the proxies (River, Oracle, Allowlist, OperatorsRegistry, and the RedeemManager when it exists from the
 * start) with the proxy admin (dev account #7) and their initializers, the AllowlistFirewall (admin: the
 * simulator's allower #2, executor: the service's writer #1, allowed `allow` and `setAllowPermissions`),
 * ELFeeRecipient, Withdraw, DepositContract; then the Allowlist's denier (1.2.1), the oracle member, the keeper
 * and 5 operators. The Allowlist's admin and allower are the firewall. Last, after every protocol contract and
 * call (so their addresses do not depend on them), the ETH / USD and ETH / EUR PriceFeeds, without a round yet
 * (the simulator sets each day's prices: `priceTxs`).
 *
 * @example
 * const deployment = await deployDevnet({ publicClient, testClient, timestamp: timeline.genesisTimestamp + 12n })
 */
export async function deployDevnet(options: DeployOptions): Promise<DevnetDeployment> {
  const { publicClient } = options
  const artifacts = options.artifacts ?? loadArtifacts()
  const initialFee = options.initialFee ?? 1500
  const plan = options.plan ?? versionPlan('current')
  const roles = devRoles()
  const builder = options.builder ?? (await createBlockBuilder(options))
  const [firstNonce, proxyAdminNonce] = await Promise.all([
    publicClient.getTransactionCount({ address: roles.admin, blockTag: 'pending' }),
    publicClient.getTransactionCount({ address: roles.proxyAdmin, blockTag: 'pending' }),
  ])
  const layout = planLayout(plan, roles, firstNonce, proxyAdminNonce)
  const operators = devnetOperators()
  const requests = adminRequests(artifacts, roles.admin)
  const protocol = protocolCreations(requests, plan, roles, layout, initialFee)
  const calls = wiringCalls(requests, plan, roles, layout.proxyAt, operators)
  // the price feeds come after everything else: every address above stays what it was without them
  const feeds = priceFeedCreations(requests, roles.admin, firstNonce + protocol.length + calls.length)
  const txs = [...protocol.map((c) => c.tx), ...calls, feeds.usd.tx, feeds.eur.tx]
  const first = await mineChecked(builder, txs, [...protocol, feeds.usd, feeds.eur], options.timestamp)
  for (const contract of layout.proxied) {
    const initial = layout.implementations[contract].find((r) => r.version === plan.initial[contract])
    if (initial) initial.block = first.number
  }
  const { proxyAt } = layout
  return {
    contracts: {
      river: proxyAt.river,
      redeemManager: proxyAt.redeemManager,
      allowlist: proxyAt.allowlist,
      oracle: proxyAt.oracle,
      operatorsRegistry: proxyAt.operatorsRegistry,
      firewall: layout.firewall,
      elFeeRecipient: layout.elFeeRecipient,
      withdraw: layout.withdraw,
      depositContract: layout.depositContract,
      usdPriceFeed: feeds.usd.address,
      eurPriceFeed: feeds.eur.address,
    },
    roles,
    deployBlock: first.number,
    deployTimestamp: first.timestamp,
    operators,
    initialFee,
    plan,
    implementations: layout.implementations,
    proxyAdminNonce,
  }
}

/**
 * Mines the deploy block's transactions at `timestamp` and checks each creation landed at its planned address
 * (receipts in request order: a batch too big for one block is split over several). Returns the first block.
 */
async function mineChecked(
  builder: BlockBuilder,
  txs: TxRequest[],
  created: Creation[],
  timestamp: bigint,
): Promise<MinedBlock> {
  const blocks = await builder.mine(txs, timestamp)
  const first = blocks[0]
  if (!first) throw new Error('deployment mined no block')
  const receipts = blocks.flatMap((b) => b.receipts)
  created.forEach(({ tx: { label }, address }) => {
    const deployed = receipts[txs.findIndex((tx) => tx.label === label)]?.contractAddress?.toLowerCase()
    if (deployed !== address.toLowerCase())
      throw new Error(`${label}: deployed at ${deployed}, expected ${address}`)
  })
  return first
}

/**
 * The proxy admin's transaction of one upgrade step: the proxy's deployment for a contract that does not
 * exist yet (the RedeemManager at 1.0.0, initialized and wired to River), else `upgradeToAndCall` with the new
 * version's initializer (River 1.0.0 gets the RedeemManager, Allowlist 1.2.1 the denier), or `upgradeTo` when
 * the version has none.
 *
 * @example
 * upgradeTx(deployment, { day: 7, contract: 'river', version: '0.5.0' }) // upgradeTo(RiverV0_5)
 */
export function upgradeTx(
  deployment: DevnetDeployment,
  step: UpgradeStep,
  artifacts: Artifacts = loadArtifacts(),
): TxRequest {
  const { contracts, roles, plan } = deployment
  const implementation = deployment.implementations[step.contract].find((r) => r.version === step.version)
  if (!implementation) throw new Error(`no ${step.contract} ${step.version} implementation deployed`)
  const label = `upgrade ${step.contract} to ${step.version}`
  const first = plan.upgrades.find((s) => s.contract === step.contract) === step
  if (first && plan.initial[step.contract] === null) {
    const init = encodeFunctionData({
      abi: devnetRedeemManagerAbi,
      functionName: 'initializeRedeemManagerV1',
      args: [contracts.river],
    })
    return {
      from: roles.proxyAdmin,
      to: null,
      data: deployData(artifacts, 'TransparentProxy', [implementation.address, roles.proxyAdmin, init]),
      gas: DEPLOY_GAS,
      label: `deploy ${step.contract} proxy (${step.version})`,
    }
  }
  const init = upgradeInitializer(deployment, step)
  const data = init
    ? encodeFunctionData({
        abi: devnetProxyAbi,
        functionName: 'upgradeToAndCall',
        args: [implementation.address, init],
      })
    : encodeFunctionData({ abi: devnetProxyAbi, functionName: 'upgradeTo', args: [implementation.address] })
  return { from: roles.proxyAdmin, to: contracts[step.contract], data, gas: CALL_GAS, label }
}

/** The initializer a version runs when its proxy is upgraded to it, if any. */
function upgradeInitializer(deployment: DevnetDeployment, step: UpgradeStep): Hex | undefined {
  const { contracts, roles } = deployment
  const key = `${step.contract} ${step.version}`
  switch (key) {
    case 'river 1.0.0':
      return encodeFunctionData({
        abi: devnetRiverAbi,
        functionName: 'initRiverV1_1',
        args: [
          contracts.redeemManager,
          ...ORACLE_SPEC.slice(0, 4),
          0n,
          ...ORACLE_SPEC.slice(4),
          0n,
          0n,
        ] as never,
      })
    case 'river 1.2.1':
      return encodeFunctionData({ abi: devnetRiverAbi, functionName: 'initRiverV1_2' })
    case 'oracle 1.0.0':
      return encodeFunctionData({ abi: devnetOracleAbi, functionName: 'initOracleV1_1' })
    case 'allowlist 1.2.1':
      return encodeFunctionData({
        abi: devnetAllowlistAbi,
        functionName: 'initAllowlistV1_1',
        args: [roles.denier],
      })
    case 'redeemManager 1.2.1':
      return encodeFunctionData({ abi: devnetRedeemManagerAbi, functionName: 'initializeRedeemManagerV1_2' })
    default:
      return undefined
  }
}
