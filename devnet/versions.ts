/**
 * The protocol's implementation versions and the plan of a devnet history: which version each of the five
 * proxies the service reads starts on and which upgrades happen on which day. Mainnet ran 0.4.0 (October
 * 2022), 0.5.0, 1.0.0 (withdrawals and redemptions, mid-2023), 1.0.1, 1.1.0 and 1.2.1; the devnet replays them
 * all on the protocol's own bytecode (protocol-releases.ts holds each release's actions).
 */

/** The contracts the devnet deploys behind EIP-1967 proxies. */
export type ProxiedContract = 'river' | 'oracle' | 'allowlist' | 'redeemManager' | 'operatorsRegistry'

export const PROXIED_CONTRACTS: readonly ProxiedContract[] = [
  'river',
  'oracle',
  'allowlist',
  'redeemManager',
  'operatorsRegistry',
]

/** Mainnet's implementation versions. */
export type ProtocolVersion = '0.4.0' | '0.5.0' | '1.0.0' | '1.0.1' | '1.1.0' | '1.2.1'

/** Days (indices) of the three protocol upgrades of a versioned history. */
export interface UpgradeDays {
  /** River and Allowlist 0.5.0 */
  v05Day: number
  /** River and Oracle 1.0.0; the RedeemManager appears (proxy deployed and wired); withdrawals start */
  v1Day: number
  /** River, Oracle, Allowlist (with its denier) and RedeemManager 1.2.1 */
  v12Day: number
  /** on the protocol's bytecode: River and OperatorsRegistry 1.0.1 (default: between v1Day and v12Day) */
  v101Day?: number
  /** on the protocol's bytecode: OperatorsRegistry and RedeemManager 1.1.0 (default: after v101Day) */
  v11Day?: number
}

/** The upgrade days of the versioned preset (a 91-day history: 0.4 for a week, 1.2.1 from day 35 on). */
export const VERSIONED_UPGRADE_DAYS: UpgradeDays = { v05Day: 7, v1Day: 20, v12Day: 35 }

/** One proxy upgrade (or, for a contract not deployed yet, its proxy's deployment) on a day's first block. */
export interface UpgradeStep {
  day: number
  contract: ProxiedContract
  version: ProtocolVersion
}

/** Which history the devnet replays: `current` (every proxy on 1.2.1 from the start) or `versioned`. */
export type HistoryKind = 'current' | 'versioned'

/** The versions of a history: the initial version of each proxy (null: not deployed yet) and the upgrades. */
export interface VersionPlan {
  kind: HistoryKind
  initial: Record<ProxiedContract, ProtocolVersion | null>
  /** in the order they are sent: by day, then in the order of `upgradeSteps` */
  upgrades: UpgradeStep[]
}

/**
 * The upgrade steps of the three upgrades, in the order they are sent within a day (the RedeemManager's
 * proxy is deployed before River is pointed at it).
 *
 * @example
 * upgradeSteps({ v05Day: 7, v1Day: 20, v12Day: 35 })[0] // { day: 7, contract: 'river', version: '0.5.0' }
 */
export function upgradeSteps(days: UpgradeDays): UpgradeStep[] {
  if (!(days.v05Day >= 1 && days.v05Day < days.v1Day && days.v1Day < days.v12Day)) {
    throw new Error('upgrade days must satisfy 1 <= v05Day < v1Day < v12Day')
  }
  return [
    { day: days.v05Day, contract: 'river', version: '0.5.0' },
    { day: days.v05Day, contract: 'allowlist', version: '0.5.0' },
    { day: days.v1Day, contract: 'redeemManager', version: '1.0.0' },
    { day: days.v1Day, contract: 'river', version: '1.0.0' },
    { day: days.v1Day, contract: 'oracle', version: '1.0.0' },
    { day: days.v12Day, contract: 'river', version: '1.2.1' },
    { day: days.v12Day, contract: 'oracle', version: '1.2.1' },
    { day: days.v12Day, contract: 'allowlist', version: '1.2.1' },
    { day: days.v12Day, contract: 'redeemManager', version: '1.2.1' },
  ]
}

/**
 * The version plan of a history.
 *
 * @example
 * versionPlan('current').initial.river // '1.2.1'
 * versionPlan('versioned').initial.redeemManager // null (deployed at the 1.0 upgrade)
 */
export function versionPlan(
  kind: HistoryKind = 'current',
  days: UpgradeDays = VERSIONED_UPGRADE_DAYS,
): VersionPlan {
  if (kind === 'current') {
    return {
      kind,
      initial: {
        river: '1.2.1',
        oracle: '1.2.1',
        allowlist: '1.2.1',
        redeemManager: '1.2.1',
        operatorsRegistry: '1.2.1',
      },
      upgrades: [],
    }
  }
  return {
    kind,
    initial: {
      river: '0.4.0',
      oracle: '0.4.0',
      allowlist: '0.4.0',
      redeemManager: null,
      operatorsRegistry: '1.2.1',
    },
    upgrades: upgradeSteps(days),
  }
}

/** Whether `version` is at least `floor` (x.y.z compared numerically). */
export function atLeast(version: ProtocolVersion | null | undefined, floor: ProtocolVersion): boolean {
  if (!version) return false
  const a = version.split('.').map(Number)
  const b = floor.split('.').map(Number)
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0)
  }
  return true
}

/** One implementation a proxy pointed at: its version, address and the block of the switch (null: planned). */
export interface ImplementationRecord {
  version: ProtocolVersion
  address: `0x${string}`
  block: bigint | null
}
