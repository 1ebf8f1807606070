/**
 * The devnet deployment's shape (what `deployProtocolDevnet` returns and the simulator drives) and the facts
 * every part of it shares: the operators registered at launch, the selectors the AllowlistFirewall's executor
 * may forward, the gas of a wiring call.
 */
import { type Address, getAddress, type PublicClient, slice, type TestClient, toFunctionSelector } from 'viem'
import { allowlistAbi, EIP1967_IMPLEMENTATION_SLOT } from '../chain/abi.ts'
import { type DevRole, derivedAddress } from './accounts.ts'
import type { BlockBuilder } from './blocks.ts'
import type { Artifacts } from './compile.ts'
import type { ProtocolLayout } from './protocol-layout.ts'
import type { ImplementationRecord, ProtocolVersion, ProxiedContract, VersionPlan } from './versions.ts'

/** Node operators registered at deployment (fictional names). */
export const DEVNET_OPERATOR_NAMES = [
  'Alder Staking',
  'Birch Validators',
  'Cedar Nodes',
  'Dogwood Infrastructure',
  'Elm Consensus',
] as const

/** Gas limit of a wiring call. */
export const CALL_GAS = 500_000n
/** The selectors the firewall's executor (the service's writer) may forward: 0.4/0.5 `allow`, 1.2.1's write. */
export const EXECUTOR_SELECTORS = [
  toFunctionSelector('function allow(address[],uint256[])'),
  toFunctionSelector(allowlistAbi.find((i) => i.type === 'function' && i.name === 'setAllowPermissions')!),
] as const

/** The node operators registered at deployment: their names and derived addresses. */
export function devnetOperators(): { name: string; address: Address }[] {
  return DEVNET_OPERATOR_NAMES.map((name, i) => ({
    name,
    address: derivedAddress('operators', 'operator', i),
  }))
}

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
  /** the CoverageFund's proxy */
  coverageFund: Address
  /** the ETH / USD PriceFeed (Chainlink-shaped, not a protocol contract; its owner is the admin) */
  usdPriceFeed: Address
  /** the EUR / USD PriceFeed (EUR's price in USD: the devnet's ETH / EUR is derived from it and ETH / USD) */
  eurPriceFeed: Address
}

/** What `deployProtocolDevnet` deployed: the addresses, the roles, the deploy block and the version history. */
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
  /** the protocol deployment's proxies, firewalls, implementations and release days (protocol-layout.ts) */
  protocol: ProtocolLayout
}

/** What `deployProtocolDevnet` deploys on, when, and with which fee, artifacts and version plan. */
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
 * The version a proxy points at (its EIP-1967 slot at `blockNumber`, or the head), mapped through the
 * deployment's implementations; throws for an address the deployment does not know.
 */
export async function implementationVersionAt(
  publicClient: PublicClient,
  deployment: Pick<DevnetDeployment, 'contracts' | 'implementations'>,
  contract: ProxiedContract,
  blockNumber?: bigint,
): Promise<ProtocolVersion> {
  const word = await publicClient.getStorageAt({
    address: deployment.contracts[contract],
    slot: EIP1967_IMPLEMENTATION_SLOT,
    ...(blockNumber === undefined ? {} : { blockNumber }),
  })
  const address = getAddress(slice(word ?? '0x', 12))
  const record = deployment.implementations[contract].find((r) => r.address === address)
  if (!record) throw new Error(`${contract} points at ${address}, not a devnet implementation`)
  return record.version
}
