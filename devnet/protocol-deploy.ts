/**
 * The devnet on the protocol's own bytecode: deploys mainnet's implementations behind the real TUPProxy, each
 * proxy administered by its own proxy Firewall (governor: the proxy admin, dev account #7), the Allowlist
 * behind the AllowlistFirewall, a deposit contract stub at mainnet's address, and initializes everything as
 * mainnet's deploy scripts did at the 0.4.0 launch; `releaseTxs` builds each later release's upgrades and
 * migration calls (protocol-releases.ts). Every implementation of the whole history is deployed in the deploy
 * block, as the imitation deployment does (deploy.ts).
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
import { devRoles } from './accounts.ts'
import { type BlockBuilder, createBlockBuilder, type TxRequest } from './blocks.ts'
import { type Artifacts, devnetErrorsAbi, loadArtifacts } from './compile.ts'
import type { DeployOptions, DevnetDeployment } from './deploy.ts'
import { CALL_GAS, devnetOperators, EXECUTOR_SELECTORS } from './deploy-plan.ts'
import { implementationArtifact, protocolCode, protocolErrorsAbi } from './protocol-code.ts'
import {
  ALL_PROXIES,
  CL_SPEC,
  COMMITTABLE_LIMITS,
  DEPOSIT_CONTRACT_ADDRESS,
  DEPOSIT_CONTRACT_STUB,
  type Initializer,
  LAUNCH_PROXIES,
  LAUNCH_VERSION,
  PROXY_CONTRACT,
  type ProtocolProxy,
  RELEASE_ACTIONS,
  REPORT_BOUNDS,
  type Release,
  type ReleaseAction,
  type ReleaseDays,
} from './protocol-releases.ts'
import {
  type ImplementationRecord,
  PROXIED_CONTRACTS,
  type ProtocolVersion,
  type ProxiedContract,
  type UpgradeStep,
  type VersionPlan,
} from './versions.ts'

/** Gas limit of a creation of the protocol's code (River 1.0.0 is 24.5 KB). */
const PROTOCOL_DEPLOY_GAS = 12_000_000n
/** Gas limit of an upgrade with its migration. */
const UPGRADE_GAS = 2_000_000n

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

/** The releases after launch, oldest first. */
export const RELEASES = Object.keys(RELEASE_ACTIONS) as Exclude<Release, '0.4.0'>[]

/**
 * The release days of a history kind: a versioned history upgrades on the given days (1.0.1 and 1.1.0
 * between 1.0.0 and 1.2.1 unless given), a current one applies every release in the deploy block.
 */
export function releaseDaysOf(plan: VersionPlan, days?: Partial<Record<string, number>>): ReleaseDays {
  if (plan.kind === 'current') return { '0.5.0': -1, '1.0.0': -1, '1.0.1': -1, '1.1.0': -1, '1.2.1': -1 }
  const dayOf = (contract: ProxiedContract, version: ProtocolVersion) =>
    plan.upgrades.find((s) => s.contract === contract && s.version === version)?.day
  const v05 = dayOf('river', '0.5.0') ?? 7
  const v1 = dayOf('river', '1.0.0') ?? 20
  const v12 = dayOf('river', '1.2.1') ?? 35
  const v101 = days?.v101Day ?? v1 + Math.max(1, Math.floor((v12 - v1) / 3))
  const v11 = days?.v11Day ?? Math.min(v12 - 1, v101 + Math.max(1, Math.floor((v12 - v101) / 2)))
  if (!(v1 < v101 && v101 < v11 && v11 < v12)) {
    throw new Error('protocol releases need v1Day < v101Day < v11Day < v12Day')
  }
  return { '0.5.0': v05, '1.0.0': v1, '1.0.1': v101, '1.1.0': v11, '1.2.1': v12 }
}

/** The ABI of a proxy's implementation at a version. */
const abiOf = (proxy: ProtocolProxy, version: ProtocolVersion): Abi =>
  protocolCode(implementationArtifact(PROXY_CONTRACT[proxy], version)).abi

/** The versions each proxy runs over the history, in order (launch first). */
function versionsOf(proxy: ProtocolProxy): ProtocolVersion[] {
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

/**
 * The plan of the five proxies the service reads, in the shape the simulator follows (initial version and
 * upgrade steps by day), from the release days.
 */
export function protocolVersionPlan(kind: VersionPlan['kind'], releaseDays: ReleaseDays): VersionPlan {
  const initial = {} as VersionPlan['initial']
  const upgrades: UpgradeStep[] = []
  for (const contract of PROXIED_CONTRACTS) initial[contract] = LAUNCH_VERSION[contract]
  for (const release of RELEASES) {
    for (const action of RELEASE_ACTIONS[release]) {
      if (action.kind === 'adminCall' || !(PROXIED_CONTRACTS as readonly string[]).includes(action.proxy))
        continue
      const contract = action.proxy as ProxiedContract
      if (kind === 'current') initial[contract] = action.version
      else upgrades.push({ day: releaseDays[release], contract, version: action.version })
    }
  }
  return { kind, initial, upgrades }
}

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
  const basePlan = options.plan ?? protocolVersionPlan('current', releaseDaysOf({ kind } as VersionPlan))
  const releaseDays = releaseDaysOf(basePlan, options.releaseDays)
  const plan = protocolVersionPlan(kind, releaseDays)
  const initialFee = options.initialFee ?? 1500
  const roles = devRoles()
  const artifacts = options.artifacts ?? loadArtifacts()
  const builder: BlockBuilder =
    options.builder ??
    (await createBlockBuilder({
      publicClient,
      testClient,
      errorsAbi: [...devnetErrorsAbi(artifacts), ...protocolErrorsAbi()],
    }))
  await testClient.setCode({ address: DEPOSIT_CONTRACT_ADDRESS, bytecode: DEPOSIT_CONTRACT_STUB })
  const [firstNonce, proxyAdminNonce] = await Promise.all([
    publicClient.getTransactionCount({ address: roles.admin, blockTag: 'pending' }),
    publicClient.getTransactionCount({ address: roles.proxyAdmin, blockTag: 'pending' }),
  ])
  let nonce = firstNonce
  const nextAddress = () => getContractAddress({ from: roles.admin, nonce: BigInt(nonce++) })
  const txs: TxRequest[] = []
  const create = (data: Hex, label: string) => {
    txs.push({ from: roles.admin, to: null, data, gas: PROTOCOL_DEPLOY_GAS, label })
    return nextAddress()
  }
  // 1. every implementation of the history
  const implementations = {} as ProtocolLayout['implementations']
  for (const proxy of ALL_PROXIES) {
    implementations[proxy] = versionsOf(proxy).map((version) => {
      const artifact = implementationArtifact(PROXY_CONTRACT[proxy], version)
      return { version, address: create(protocolCode(artifact).creation, `deploy ${artifact}`) }
    })
  }
  // 2. the addresses to come: proxy firewalls, launch proxies, the AllowlistFirewall
  const firewallNonce = nonce
  const at = (offset: number) =>
    getContractAddress({ from: roles.admin, nonce: BigInt(firewallNonce + offset) })
  const proxyFirewalls = {} as Record<ProtocolProxy, Address>
  ALL_PROXIES.forEach((proxy, i) => {
    proxyFirewalls[proxy] = at(i)
  })
  const proxies = {} as Record<ProtocolProxy, Address>
  LAUNCH_PROXIES.forEach((proxy, i) => {
    proxies[proxy] = at(ALL_PROXIES.length + i)
  })
  const allowlistFirewall = at(ALL_PROXIES.length + LAUNCH_PROXIES.length)
  proxies.redeemManager = getContractAddress({
    from: roles.proxyAdmin,
    nonce: BigInt(proxyAdminNonce + proxyAdminTxsBefore('1.0.0', 'redeemManager')),
  })
  const oracleMembers = [roles.oracleMember, roles.oracleMember2, roles.oracleMember3]
  const layout: ProtocolLayout = {
    proxies,
    proxyFirewalls,
    implementations,
    releaseDays,
    oracleMembers,
    proxyAdminNonce,
  }
  const firewall = protocolCode('Firewall')
  const pauseSelector = toFunctionSelector('function pause()')
  for (const proxy of ALL_PROXIES) {
    create(
      encodeDeployData({
        abi: firewall.abi,
        bytecode: firewall.creation,
        args: [roles.proxyAdmin, roles.admin, proxies[proxy], [pauseSelector]],
      }),
      `deploy ${proxy} proxy firewall`,
    )
  }
  // 3. the launch proxies with their initializers (mainnet's deploy scripts 01-03 and 08)
  const launchInit = launchInitializers(layout, allowlistFirewall, initialFee)
  for (const proxy of LAUNCH_PROXIES) {
    const version = LAUNCH_VERSION[proxy] as ProtocolVersion
    create(proxyCreation(layout, proxy, version, launchInit[proxy]), `deploy ${proxy} proxy (${version})`)
  }
  create(
    encodeDeployData({
      abi: firewall.abi,
      bytecode: firewall.creation,
      args: [roles.simulatorAllower, roles.allower, proxies.allowlist, [...EXECUTOR_SELECTORS]],
    }),
    'deploy AllowlistFirewall',
  )
  // 4. the devnet's price feeds (not protocol contracts), after every protocol creation
  const priceFeed = artifacts.contracts.PriceFeed
  const feed = (description: string) =>
    create(
      encodeDeployData({ abi: priceFeed.abi as Abi, bytecode: priceFeed.bytecode, args: [description] }),
      `deploy ${description} PriceFeed`,
    )
  const usdPriceFeed = feed('ETH / USD')
  const eurPriceFeed = feed('ETH / EUR')
  // 5. wiring: three oracle members with a quorum of two, the operators
  const adminCall = (to: Address, abi: Abi, functionName: string, args: unknown[], label: string) =>
    txs.push({
      from: roles.admin,
      to,
      data: encodeFunctionData({ abi, functionName, args } as never),
      gas: CALL_GAS,
      label,
    })
  const oracleAbi = abiOf('oracle', '0.4.0')
  oracleMembers.forEach((member, i) =>
    adminCall(
      proxies.oracle,
      oracleAbi,
      'addMember',
      [member, BigInt(Math.min(i + 1, 2))],
      `Oracle.addMember ${i}`,
    ),
  )
  const operators = devnetOperators()
  for (const operator of operators) {
    adminCall(
      proxies.operatorsRegistry,
      abiOf('operatorsRegistry', '0.4.0'),
      'addOperator',
      [operator.name, operator.address],
      `OperatorsRegistry.addOperator ${operator.name}`,
    )
  }
  const partial = {
    contracts: {
      river: proxies.river,
      redeemManager: proxies.redeemManager,
      allowlist: proxies.allowlist,
      oracle: proxies.oracle,
      operatorsRegistry: proxies.operatorsRegistry,
      firewall: allowlistFirewall,
      elFeeRecipient: proxies.elFeeRecipient,
      withdraw: proxies.withdraw,
      depositContract: DEPOSIT_CONTRACT_ADDRESS,
      coverageFund: proxies.coverageFund,
      usdPriceFeed,
      eurPriceFeed,
    },
    roles,
    operators,
    initialFee,
    plan,
    proxyAdminNonce,
    protocol: layout,
  }
  // 6. a current history: every release now
  if (kind === 'current') {
    for (const release of RELEASES) txs.push(...releaseTxs(partial, release, { fundedKeys: 0n }))
  }
  const blocks = await builder.mine(txs, options.timestamp)
  const first = blocks[0]
  if (!first) throw new Error('deployment mined no block')
  const records = {} as Record<ProxiedContract, ImplementationRecord[]>
  for (const contract of PROXIED_CONTRACTS) {
    const initial = plan.initial[contract]
    records[contract] = implementations[contract]
      .filter((r) => kind === 'versioned' || r.version === initial)
      .map((r) => ({ ...r, block: r.version === initial ? first.number : null }))
  }
  return {
    ...partial,
    deployBlock: first.number,
    deployTimestamp: first.timestamp,
    implementations: records,
  }
}

/** The calldata each launch proxy runs at its deployment (mainnet's launch initializers). */
function launchInitializers(
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
function proxyCreation(
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

/** How many proxy admin transactions the releases send before `proxy`'s action in `release`. */
function proxyAdminTxsBefore(release: Exclude<Release, '0.4.0'>, proxy: ProtocolProxy): number {
  let count = 0
  for (const r of RELEASES) {
    for (const action of RELEASE_ACTIONS[r]) {
      if (r === release && action.kind !== 'adminCall' && action.proxy === proxy) return count
      if (action.kind !== 'adminCall') count += 1
    }
  }
  throw new Error(`${proxy} has no action in ${release}`)
}

/** What a release's calls need from the chain at the time: the keys funded so far (1.0.0's re-emission). */
export interface ReleaseReads {
  fundedKeys: bigint
}

/** The arguments of a migration initializer. */
function initializerArgs(deployment: ReleaseDeployment, init: Initializer): unknown[] {
  const { proxies } = deployment.protocol
  switch (init) {
    case 'initializeRedeemManagerV1':
    case 'initializeWithdrawV1':
      return [proxies.river]
    case 'initRiverV1_1':
      return [
        proxies.redeemManager,
        CL_SPEC.epochsPerFrame,
        CL_SPEC.slotsPerEpoch,
        CL_SPEC.secondsPerSlot,
        CL_SPEC.genesisTime,
        CL_SPEC.epochsToAssumedFinality,
        REPORT_BOUNDS.annualAprUpperBound,
        REPORT_BOUNDS.relativeLowerBound,
        COMMITTABLE_LIMITS.minDailyNetCommittableAmount,
        COMMITTABLE_LIMITS.maxDailyRelativeCommittableAmount,
      ]
    case 'initAllowlistV1_1':
      return [deployment.roles.denier]
    default:
      return []
  }
}

/** The part of a deployment a release's transactions need. */
type ReleaseDeployment = Pick<DevnetDeployment, 'roles'> & { protocol: ProtocolLayout }

/**
 * The transactions of one release, in mainnet's order: the proxy admin's upgrades (through each proxy's
 * firewall) and the RedeemManager proxy's deployment, and the admin's calls (River's CoverageFund at 0.5.0,
 * the re-emission of funded keys at 1.0.0, River's keeper at 1.2.1).
 *
 * @example
 * releaseTxs(deployment, '1.0.1', { fundedKeys: 0n }) // OperatorsRegistry 1.0.1, River 1.0.1 + initRiverV1_2
 */
export function releaseTxs(
  deployment: ReleaseDeployment,
  release: Exclude<Release, '0.4.0'>,
  reads: ReleaseReads,
): TxRequest[] {
  const { roles, protocol } = deployment
  const tup = protocolCode('TUPProxy')
  return RELEASE_ACTIONS[release].flatMap((action: ReleaseAction): TxRequest[] => {
    if (action.kind === 'deployProxy') {
      const init = encodeFunctionData({
        abi: abiOf(action.proxy, action.version),
        functionName: action.init,
        args: initializerArgs(deployment, action.init),
      } as never)
      return [
        {
          from: roles.proxyAdmin,
          to: null,
          data: proxyCreation(protocol, action.proxy, action.version, init),
          gas: PROTOCOL_DEPLOY_GAS,
          label: `deploy ${action.proxy} proxy (${action.version})`,
        },
      ]
    }
    if (action.kind === 'upgrade') {
      const implementation = protocol.implementations[action.proxy].find((r) => r.version === action.version)
      if (!implementation) throw new Error(`no ${action.proxy} ${action.version} implementation`)
      const data = action.init
        ? encodeFunctionData({
            abi: tup.abi,
            functionName: 'upgradeToAndCall',
            args: [
              implementation.address,
              encodeFunctionData({
                abi: abiOf(action.proxy, action.version),
                functionName: action.init,
                args: initializerArgs(deployment, action.init),
              } as never),
            ],
          })
        : encodeFunctionData({ abi: tup.abi, functionName: 'upgradeTo', args: [implementation.address] })
      return [
        {
          from: roles.proxyAdmin,
          to: protocol.proxyFirewalls[action.proxy],
          data,
          gas: UPGRADE_GAS,
          label: `upgrade ${action.proxy} to ${action.version}`,
        },
      ]
    }
    const version = release as ProtocolVersion
    const call = (functionName: string, args: unknown[]): TxRequest => ({
      from: roles.admin,
      to: protocol.proxies[action.proxy],
      data: encodeFunctionData({ abi: abiOf(action.proxy, version), functionName, args } as never),
      gas: UPGRADE_GAS,
      label: `${action.proxy}.${functionName} (${release})`,
    })
    switch (action.fn) {
      case 'setCoverageFund':
        return [call('setCoverageFund', [protocol.proxies.coverageFund])]
      case 'setKeeper':
        return [call('setKeeper', [roles.keeper])]
      case 'forceFundedValidatorKeysEventEmission':
        return reads.fundedKeys > 0n
          ? [call('forceFundedValidatorKeysEventEmission', [reads.fundedKeys])]
          : []
    }
  })
}
