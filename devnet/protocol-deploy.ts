/**
 * The devnet on the protocol's own bytecode: deploys mainnet's implementations behind the real TUPProxy, each
 * proxy administered by its own proxy Firewall (governor: the proxy admin, dev account #7), the Allowlist
 * behind the AllowlistFirewall, a deposit contract stub at mainnet's address, and initializes everything as
 * mainnet's deploy scripts did at the 0.4.0 launch (protocol-layout.ts); each later release's transactions come
 * from protocol-release-txs.ts. Every implementation of the whole history is deployed in the deploy block
 * (mainnet deployed each before its release).
 */
import { type Abi, type Address, encodeDeployData, encodeFunctionData, getContractAddress } from 'viem'
import { type DevRole, devRoles } from './accounts.ts'
import { type BlockBuilder, createBlockBuilder, type TxRequest } from './blocks.ts'
import { type Artifacts, loadArtifacts } from './compile.ts'
import type { DeployOptions, DevnetDeployment } from './deployment.ts'
import { CALL_GAS, devnetOperators } from './deployment.ts'
import {
  abiOf,
  launchCreations,
  PROTOCOL_DEPLOY_GAS,
  type ProtocolLayout,
  planProtocolLayout,
  RELEASES,
} from './protocol-layout.ts'
import { protocolVersionPlan, releaseDaysOf, releaseTxs } from './protocol-release-txs.ts'
import { DEPOSIT_CONTRACT_ADDRESS, DEPOSIT_CONTRACT_STUB } from './protocol-releases.ts'
import { type ImplementationRecord, PROXIED_CONTRACTS, type ProxiedContract } from './versions.ts'

/**
 * Deploys the protocol's own code (see the file's comment) in one block and, for a `current` history, applies
 * every release in it. Returns the deployment the simulator drives: the five proxies the service reads in
 * `contracts`, the AllowlistFirewall, the ELFeeRecipient, Withdraw and CoverageFund proxies, the deposit
 * contract stub, and the price feeds (the devnet's own PriceFeed contract).
 *
 * @example
 * const deployment = await deployProtocolDevnet({ publicClient, testClient, timestamp, plan: versionPlan('versioned') })
 */
export async function deployProtocolDevnet(
  options: DeployOptions & { releaseDays?: Partial<Record<string, number>> },
): Promise<DevnetDeployment & { protocol: ProtocolLayout }> {
  const { publicClient, testClient } = options
  const kind = options.plan?.kind ?? 'current'
  const releaseDays = releaseDaysOf(
    options.plan ?? { kind, initial: {} as never, upgrades: [] },
    options.releaseDays,
  )
  const plan = protocolVersionPlan(kind, releaseDays)
  const initialFee = options.initialFee ?? 1500
  const roles = devRoles()
  const artifacts = options.artifacts ?? loadArtifacts()
  const builder: BlockBuilder = options.builder ?? (await createBlockBuilder({ publicClient, testClient }))
  await testClient.setCode({ address: DEPOSIT_CONTRACT_ADDRESS, bytecode: DEPOSIT_CONTRACT_STUB })
  const [firstNonce, proxyAdminNonce] = await Promise.all([
    publicClient.getTransactionCount({ address: roles.admin, blockTag: 'pending' }),
    publicClient.getTransactionCount({ address: roles.proxyAdmin, blockTag: 'pending' }),
  ])
  const planned = planProtocolLayout(roles, firstNonce, proxyAdminNonce, releaseDays)
  const { layout } = planned
  const created = [
    ...launchCreations(planned, roles, initialFee),
    ...priceFeedCreations(artifacts, roles.admin, planned.nextNonce),
  ]
  const contracts = {
    river: layout.proxies.river,
    redeemManager: layout.proxies.redeemManager,
    allowlist: layout.proxies.allowlist,
    oracle: layout.proxies.oracle,
    operatorsRegistry: layout.proxies.operatorsRegistry,
    firewall: planned.allowlistFirewall,
    elFeeRecipient: layout.proxies.elFeeRecipient,
    withdraw: layout.proxies.withdraw,
    depositContract: DEPOSIT_CONTRACT_ADDRESS,
    coverageFund: layout.proxies.coverageFund,
    usdPriceFeed: (created.at(-2) as { address: Address }).address,
    eurPriceFeed: (created.at(-1) as { address: Address }).address,
  }
  const operators = devnetOperators()
  const txs = [...created.map((c) => c.tx), ...wiringTxs(layout, roles, operators)]
  // a current history: every release in the deploy block too
  if (kind === 'current') {
    for (const release of RELEASES)
      txs.push(...releaseTxs({ roles, protocol: layout }, release, { fundedKeys: 0n }))
  }
  const blocks = await builder.mine(txs, options.timestamp)
  const first = blocks[0]
  if (!first) throw new Error('deployment mined no block')
  const receipts = blocks.flatMap((b) => b.receipts)
  created.forEach(({ tx, address }, i) => {
    const deployed = receipts[i]?.contractAddress?.toLowerCase()
    if (deployed !== address.toLowerCase())
      throw new Error(`${tx.label}: deployed at ${deployed}, expected ${address}`)
  })
  const implementations = {} as Record<ProxiedContract, ImplementationRecord[]>
  for (const contract of PROXIED_CONTRACTS) {
    const initial = plan.initial[contract]
    implementations[contract] = layout.implementations[contract]
      .filter((r) => kind === 'versioned' || r.version === initial)
      .map((r) => ({ ...r, block: r.version === initial ? first.number : null }))
  }
  return {
    contracts,
    roles,
    operators,
    initialFee,
    plan,
    proxyAdminNonce,
    protocol: layout,
    deployBlock: first.number,
    deployTimestamp: first.timestamp,
    implementations,
  }
}

/**
 * The ETH / USD and EUR / USD PriceFeeds (the devnet's own contract), at the admin's nonces from `nonce`: no
 * ETH / EUR feed, as on mainnet (the service derives ETH / EUR from the two).
 */
function priceFeedCreations(
  artifacts: Artifacts,
  admin: Address,
  nonce: number,
): { tx: TxRequest; address: Address }[] {
  const feed = artifacts.contracts.PriceFeed
  return ['ETH / USD', 'EUR / USD'].map((description, i) => ({
    tx: {
      from: admin,
      to: null,
      data: encodeDeployData({ abi: feed.abi as Abi, bytecode: feed.bytecode, args: [description] }),
      gas: PROTOCOL_DEPLOY_GAS,
      label: `deploy ${description} PriceFeed`,
    },
    address: getContractAddress({ from: admin, nonce: BigInt(nonce + i) }),
  }))
}

/** The admin's wiring at launch: three oracle members with a quorum of two, then the node operators. */
function wiringTxs(
  layout: ProtocolLayout,
  roles: Record<DevRole, Address>,
  operators: { name: string; address: Address }[],
): TxRequest[] {
  const call = (to: Address, abi: Abi, functionName: string, args: unknown[], label: string): TxRequest => ({
    from: roles.admin,
    to,
    data: encodeFunctionData({ abi, functionName, args } as never),
    gas: CALL_GAS,
    label,
  })
  const oracleAbi = abiOf('oracle', '0.4.0')
  const registryAbi = abiOf('operatorsRegistry', '0.4.0')
  return [
    ...layout.oracleMembers.map((member, i) =>
      call(
        layout.proxies.oracle,
        oracleAbi,
        'addMember',
        [member, BigInt(Math.min(i + 1, 2))],
        `Oracle.addMember ${i}`,
      ),
    ),
    ...operators.map((operator) =>
      call(
        layout.proxies.operatorsRegistry,
        registryAbi,
        'addOperator',
        [operator.name, operator.address],
        `OperatorsRegistry.addOperator ${operator.name}`,
      ),
    ),
  ]
}
