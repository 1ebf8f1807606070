/**
 * Where the devnet's protocol deployment puts things and how it initializes them at launch: the proxies and
 * their firewalls, every implementation of the history, mainnet's launch initializers. Pure: no chain.
 */
import {
  type Abi,
  type Address,
  concatHex,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  padHex,
  toFunctionSelector,
} from 'viem'
import { type DevRole, devRoles } from './accounts.ts'
import type { TxRequest } from './blocks.ts'
import { EXECUTOR_SELECTORS } from './deployment.ts'
import { implementationArtifact, protocolCode } from './protocol-code.ts'
import {
  ALL_PROXIES,
  CL_SPEC,
  DEPOSIT_CONTRACT_ADDRESS,
  LAUNCH_PROXIES,
  LAUNCH_VERSION,
  PROXY_CONTRACT,
  type ProtocolProxy,
  RELEASE_ACTIONS,
  REPORT_BOUNDS,
  type Release,
  type ReleaseDays,
} from './protocol-releases.ts'
import type { ProtocolVersion } from './versions.ts'

/** The releases after launch, oldest first. */
export const RELEASES = Object.keys(RELEASE_ACTIONS) as Exclude<Release, '0.4.0'>[]

/** How many proxy admin transactions the releases send before `proxy`'s action in `release`. */
export function proxyAdminTxsBefore(release: Exclude<Release, '0.4.0'>, proxy: ProtocolProxy): number {
  let count = 0
  for (const r of RELEASES) {
    for (const action of RELEASE_ACTIONS[r]) {
      if (r === release && action.kind !== 'adminCall' && action.proxy === proxy) return count
      if (action.kind !== 'adminCall') count += 1
    }
  }
  throw new Error(`${proxy} has no action in ${release}`)
}

/** What the protocol deployment adds to a DevnetDeployment. */
export interface ProtocolLayout {
  /** every proxy's address (the RedeemManager's too, before its deployment at 1.0.0) */
  proxies: Record<ProtocolProxy, Address>
  /** the Firewall that is each proxy's admin (governor: the proxy admin #7; executor: the admin, `pause()`) */
  proxyFirewalls: Record<ProtocolProxy, Address>
  /** per proxy, the implementation address of each version it runs over the history */
  implementations: Record<ProtocolProxy, { version: ProtocolVersion; address: Address }[]>
  /** the day of each release (-1: in the deploy block) */
  releaseDays: ReleaseDays
  /** the oracle members (quorum 2) */
  oracleMembers: Address[]
  /** the proxy admin's nonce before its first release transaction */
  proxyAdminNonce: number
}

/** The ABI of a proxy's implementation at a version. */
export const abiOf = (proxy: ProtocolProxy, version: ProtocolVersion): Abi =>
  protocolCode(implementationArtifact(PROXY_CONTRACT[proxy], version)).abi

/** The versions each proxy runs over the history, in order (launch first). */
export function versionsOf(proxy: ProtocolProxy): ProtocolVersion[] {
  const versions: ProtocolVersion[] = []
  const launch = LAUNCH_VERSION[proxy]
  if (launch) versions.push(launch)
  for (const release of RELEASES) {
    for (const action of RELEASE_ACTIONS[release]) {
      if (action.kind !== 'adminCall' && action.proxy === proxy && !versions.includes(action.version)) {
        versions.push(action.version)
      }
    }
  }
  return versions
}

/** The withdrawal credentials of a Withdraw contract: 0x01, 11 zero bytes, its address. */
export const withdrawalCredentials = (withdraw: Address): Hex =>
  concatHex(['0x01', padHex('0x', { size: 11 }), withdraw])

/** The calldata each launch proxy runs at its deployment (mainnet's launch initializers). */
export function launchInitializers(
  layout: ProtocolLayout,
  allowlistFirewall: Address,
  initialFee: number,
): Record<ProtocolProxy, Hex> {
  const roles = devRoles()
  const { proxies } = layout
  const encode = (proxy: ProtocolProxy, functionName: string, args: unknown[]) =>
    encodeFunctionData({
      abi: abiOf(proxy, LAUNCH_VERSION[proxy] as ProtocolVersion),
      functionName,
      args,
    } as never)
  return {
    withdraw: '0x',
    allowlist: encode('allowlist', 'initAllowlistV1', [allowlistFirewall, allowlistFirewall]),
    river: encode('river', 'initRiverV1', [
      DEPOSIT_CONTRACT_ADDRESS,
      proxies.elFeeRecipient,
      withdrawalCredentials(proxies.withdraw),
      proxies.oracle,
      roles.admin,
      proxies.allowlist,
      proxies.operatorsRegistry,
      roles.collector,
      BigInt(initialFee),
    ]),
    oracle: encode('oracle', 'initOracleV1', [
      proxies.river,
      roles.admin,
      CL_SPEC.epochsPerFrame,
      CL_SPEC.slotsPerEpoch,
      CL_SPEC.secondsPerSlot,
      CL_SPEC.genesisTime,
      REPORT_BOUNDS.annualAprUpperBound,
      REPORT_BOUNDS.relativeLowerBound,
    ]),
    operatorsRegistry: encode('operatorsRegistry', 'initOperatorsRegistryV1', [roles.admin, proxies.river]),
    elFeeRecipient: encode('elFeeRecipient', 'initELFeeRecipientV1', [proxies.river]),
    coverageFund: encode('coverageFund', 'initCoverageFundV1', [proxies.river]),
    redeemManager: '0x',
  }
}

/** The TUPProxy's creation code for `proxy` on `version`, its admin the proxy's firewall. */
export function proxyCreation(
  layout: ProtocolLayout,
  proxy: ProtocolProxy,
  version: ProtocolVersion,
  init: Hex,
): Hex {
  const tup = protocolCode('TUPProxy')
  const implementation = layout.implementations[proxy].find((r) => r.version === version)
  if (!implementation) throw new Error(`no ${proxy} ${version} implementation`)
  return encodeDeployData({
    abi: tup.abi,
    bytecode: tup.creation,
    args: [implementation.address, layout.proxyFirewalls[proxy], init],
  })
}

/** Gas limit of a creation of the protocol's code (River 1.0.0 is 24.5 KB). */
export const PROTOCOL_DEPLOY_GAS = 12_000_000n

/** A planned launch layout: the protocol's addresses and the AllowlistFirewall's. */
export interface PlannedLayout {
  layout: ProtocolLayout
  allowlistFirewall: Address
  /** the admin's nonce after the protocol's creations (the price feeds come next) */
  nextNonce: number
}

/**
 * Every address of the launch, from the admin's nonce in creation order (implementations, proxy firewalls,
 * launch proxies, the AllowlistFirewall) and the RedeemManager's from the proxy admin's nonce at its release.
 *
 * @example
 * planProtocolLayout(devRoles(), 0, 0, releaseDays).layout.proxies.river
 */
export function planProtocolLayout(
  roles: Record<DevRole, Address>,
  firstNonce: number,
  proxyAdminNonce: number,
  releaseDays: ReleaseDays,
): PlannedLayout {
  let nonce = firstNonce
  const next = () => getContractAddress({ from: roles.admin, nonce: BigInt(nonce++) })
  const implementations = {} as ProtocolLayout['implementations']
  for (const proxy of ALL_PROXIES) {
    implementations[proxy] = versionsOf(proxy).map((version) => ({ version, address: next() }))
  }
  const proxyFirewalls = {} as Record<ProtocolProxy, Address>
  for (const proxy of ALL_PROXIES) proxyFirewalls[proxy] = next()
  const proxies = {} as Record<ProtocolProxy, Address>
  for (const proxy of LAUNCH_PROXIES) proxies[proxy] = next()
  const allowlistFirewall = next()
  proxies.redeemManager = getContractAddress({
    from: roles.proxyAdmin,
    nonce: BigInt(proxyAdminNonce + proxyAdminTxsBefore('1.0.0', 'redeemManager')),
  })
  return {
    layout: {
      proxies,
      proxyFirewalls,
      implementations,
      releaseDays,
      oracleMembers: [roles.oracleMember, roles.oracleMember2, roles.oracleMember3],
      proxyAdminNonce,
    },
    allowlistFirewall,
    nextNonce: nonce,
  }
}

/**
 * The admin's creations of the launch, in the nonce order `planProtocolLayout` assumed: every implementation,
 * a proxy Firewall per proxy (governor: the proxy admin; executor: the admin, `pause()` only), the launch
 * proxies with mainnet's initializers, the AllowlistFirewall (governor: the simulator's allower; executor: the
 * service's writer, `allow` and `setAllowPermissions`).
 */
export function launchCreations(
  planned: PlannedLayout,
  roles: Record<DevRole, Address>,
  initialFee: number,
): { tx: TxRequest; address: Address }[] {
  const { layout, allowlistFirewall } = planned
  const creation = (data: Hex, label: string, address: Address) => ({
    tx: { from: roles.admin, to: null, data, gas: PROTOCOL_DEPLOY_GAS, label },
    address,
  })
  const firewall = protocolCode('Firewall')
  const firewallCreation = (args: unknown[]) =>
    encodeDeployData({ abi: firewall.abi, bytecode: firewall.creation, args })
  const pause = toFunctionSelector('function pause()')
  const launchInit = launchInitializers(layout, allowlistFirewall, initialFee)
  return [
    ...ALL_PROXIES.flatMap((proxy) =>
      layout.implementations[proxy].map(({ version, address }) => {
        const artifact = implementationArtifact(PROXY_CONTRACT[proxy], version)
        return creation(protocolCode(artifact).creation, `deploy ${artifact}`, address)
      }),
    ),
    ...ALL_PROXIES.map((proxy) =>
      creation(
        firewallCreation([roles.proxyAdmin, roles.admin, layout.proxies[proxy], [pause]]),
        `deploy ${proxy} proxy firewall`,
        layout.proxyFirewalls[proxy],
      ),
    ),
    ...LAUNCH_PROXIES.map((proxy) => {
      const version = LAUNCH_VERSION[proxy] as ProtocolVersion
      return creation(
        proxyCreation(layout, proxy, version, launchInit[proxy]),
        `deploy ${proxy} proxy (${version})`,
        layout.proxies[proxy],
      )
    }),
    creation(
      firewallCreation([
        roles.simulatorAllower,
        roles.allower,
        layout.proxies.allowlist,
        [...EXECUTOR_SELECTORS],
      ]),
      'deploy AllowlistFirewall',
      allowlistFirewall,
    ),
  ]
}
