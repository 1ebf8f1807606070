/**
 * The devnet's protocol releases after launch as transactions: on which day each happens, the plan of the five
 * proxies the service reads, and each release's upgrades (the proxy admin through each proxy's firewall), the
 * RedeemManager proxy's deployment and the admin's migration calls, in mainnet's order.
 */
import { encodeFunctionData } from 'viem'
import type { TxRequest } from './blocks.ts'
import type { DevnetDeployment } from './deployment.ts'
import { protocolCode } from './protocol-code.ts'
import {
  abiOf,
  PROTOCOL_DEPLOY_GAS,
  type ProtocolLayout,
  proxyCreation,
  RELEASES,
} from './protocol-layout.ts'
import {
  CL_SPEC,
  COMMITTABLE_LIMITS,
  type Initializer,
  LAUNCH_VERSION,
  type ProtocolProxy,
  RELEASE_ACTIONS,
  REPORT_BOUNDS,
  type Release,
  type ReleaseAction,
  type ReleaseDays,
} from './protocol-releases.ts'
import {
  PROXIED_CONTRACTS,
  type ProtocolVersion,
  type ProxiedContract,
  type UpgradeStep,
  type VersionPlan,
} from './versions.ts'

/** Gas limit of an upgrade with its migration. */
const UPGRADE_GAS = 2_000_000n

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
  // 1.0.1 and 1.1.0 between 1.0.0 and 1.2.1 (on the same day as one of them when the days are close)
  const v101 = days?.v101Day ?? v1 + Math.floor((v12 - v1) / 3)
  const v11 = days?.v11Day ?? v101 + Math.floor((v12 - v101) / 2)
  if (!(v1 <= v101 && v101 <= v11 && v11 <= v12)) {
    throw new Error('protocol releases need v1Day <= v101Day <= v11Day <= v12Day')
  }
  return { '0.5.0': v05, '1.0.0': v1, '1.0.1': v101, '1.1.0': v11, '1.2.1': v12 }
}

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

/** The calldata of a migration initializer, with its arguments from the deployment. */
function initializerData(
  deployment: ReleaseDeployment,
  proxy: ProtocolProxy,
  version: ProtocolVersion,
  init: Initializer,
) {
  return encodeFunctionData({
    abi: abiOf(proxy, version),
    functionName: init,
    args: initializerArgs(deployment, init),
  } as never)
}

/** The proxy admin's upgrade of a proxy (through its firewall), with the version's migration if any. */
function upgradeTx(
  deployment: ReleaseDeployment,
  action: Extract<ReleaseAction, { kind: 'upgrade' }>,
): TxRequest {
  const { roles, protocol } = deployment
  const tup = protocolCode('TUPProxy')
  const implementation = protocol.implementations[action.proxy].find((r) => r.version === action.version)
  if (!implementation) throw new Error(`no ${action.proxy} ${action.version} implementation`)
  const data = action.init
    ? encodeFunctionData({
        abi: tup.abi,
        functionName: 'upgradeToAndCall',
        args: [
          implementation.address,
          initializerData(deployment, action.proxy, action.version, action.init),
        ],
      })
    : encodeFunctionData({ abi: tup.abi, functionName: 'upgradeTo', args: [implementation.address] })
  return {
    from: roles.proxyAdmin,
    to: protocol.proxyFirewalls[action.proxy],
    data,
    gas: UPGRADE_GAS,
    label: `upgrade ${action.proxy} to ${action.version}`,
  }
}

/** The admin's calls of a release (River's CoverageFund, the funded keys' re-emission, River's keeper). */
function adminCallTxs(
  deployment: ReleaseDeployment,
  release: Exclude<Release, '0.4.0'>,
  action: Extract<ReleaseAction, { kind: 'adminCall' }>,
  reads: ReleaseReads,
): TxRequest[] {
  const { roles, protocol } = deployment
  const call = (functionName: string, args: unknown[], gas = UPGRADE_GAS): TxRequest => ({
    from: roles.admin,
    to: protocol.proxies[action.proxy],
    data: encodeFunctionData({ abi: abiOf(action.proxy, release), functionName, args } as never),
    gas,
    label: `${action.proxy}.${functionName} (${release})`,
  })
  if (action.fn === 'setCoverageFund') return [call('setCoverageFund', [protocol.proxies.coverageFund])]
  if (action.fn === 'setKeeper') return [call('setKeeper', [roles.keeper])]
  // every key funded so far, re-emitted 50 at a time (as mainnet did, in several calls); one more than funded
  // in all, so the last call walks past every operator and marks the re-emission complete
  const total = reads.fundedKeys + 1n
  return Array.from({ length: Number((total + 49n) / 50n) }, (_, i) => {
    const left = total - 50n * BigInt(i)
    const amount = left < 50n ? left : 50n
    return call('forceFundedValidatorKeysEventEmission', [amount], UPGRADE_GAS + 80_000n * amount)
  })
}

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
  return RELEASE_ACTIONS[release].flatMap((action): TxRequest[] => {
    if (action.kind === 'upgrade') return [upgradeTx(deployment, action)]
    if (action.kind === 'adminCall') return adminCallTxs(deployment, release, action, reads)
    const init = initializerData(deployment, action.proxy, action.version, action.init)
    return [
      {
        from: deployment.roles.proxyAdmin,
        to: null,
        data: proxyCreation(deployment.protocol, action.proxy, action.version, init),
        gas: PROTOCOL_DEPLOY_GAS,
        label: `deploy ${action.proxy} proxy (${action.version})`,
      },
    ]
  })
}
