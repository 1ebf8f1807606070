/**
 * The protocol's releases as mainnet ran them, for the devnet on the protocol's own bytecode: which
 * implementation each proxy gets at each release and the migration calls that came with it (the protocol's
 * `deploy/mainnet/*` scripts: 01-03 the 0.4.0 launch, 08-09 0.5.0 with the CoverageFund, 10 1.0.0 with the
 * RedeemManager and the Withdraw migration, 11 1.0.1, 12 1.1.0, 16 1.2.1). Pure data and calldata: the chain
 * is in protocol-deploy.ts.
 */
import type { Address } from 'viem'
import type { ProtocolContractName } from './protocol-code.ts'
import type { ProtocolVersion } from './versions.ts'

/** Every proxy of the protocol deployment on the devnet (the five the service reads and three more). */
export type ProtocolProxy =
  | 'river'
  | 'oracle'
  | 'allowlist'
  | 'redeemManager'
  | 'operatorsRegistry'
  | 'withdraw'
  | 'elFeeRecipient'
  | 'coverageFund'

/** The fixture contract name of each proxy. */
export const PROXY_CONTRACT: Record<ProtocolProxy, ProtocolContractName> = {
  river: 'River',
  oracle: 'Oracle',
  allowlist: 'Allowlist',
  redeemManager: 'RedeemManager',
  operatorsRegistry: 'OperatorsRegistry',
  withdraw: 'Withdraw',
  elFeeRecipient: 'ELFeeRecipient',
  coverageFund: 'CoverageFund',
}

/**
 * The proxies deployed at launch, in mainnet's order (the CoverageFund's, deployed by mainnet with 0.5.0, is
 * deployed at launch too: nothing reaches it before River 0.5.0 is pointed at it). The RedeemManager's proxy
 * appears with 1.0.0.
 */
export const LAUNCH_PROXIES: readonly ProtocolProxy[] = [
  'withdraw',
  'allowlist',
  'river',
  'oracle',
  'operatorsRegistry',
  'elFeeRecipient',
  'coverageFund',
]

/** Every proxy, in the order their proxy firewalls are deployed. */
export const ALL_PROXIES: readonly ProtocolProxy[] = [...LAUNCH_PROXIES, 'redeemManager']

/** The release names of mainnet's history, oldest first. */
export type Release = '0.4.0' | '0.5.0' | '1.0.0' | '1.0.1' | '1.1.0' | '1.2.1'

/** One action of a release, in the order it is sent. */
export type ReleaseAction =
  /** the proxy admin points the proxy at `version` (through the proxy's firewall), with `init` if given */
  | { kind: 'upgrade'; proxy: ProtocolProxy; version: ProtocolVersion; init?: Initializer }
  /** the proxy admin deploys the proxy on `version`, initialized with `init` */
  | { kind: 'deployProxy'; proxy: ProtocolProxy; version: ProtocolVersion; init: Initializer }
  /** the admin calls `fn` on the proxy */
  | { kind: 'adminCall'; proxy: ProtocolProxy; fn: AdminCall }

/** The migration initializers of mainnet's releases, by name (their arguments come from the deployment). */
export type Initializer =
  | 'initializeRedeemManagerV1'
  | 'initializeWithdrawV1'
  | 'initOperatorsRegistryV1_1'
  | 'initOracleV1_1'
  | 'initRiverV1_1'
  | 'initRiverV1_2'
  | 'initAllowlistV1_1'
  | 'initializeRedeemManagerV1_2'

/** The admin calls a release makes besides its upgrades. */
export type AdminCall = 'setCoverageFund' | 'forceFundedValidatorKeysEventEmission' | 'setKeeper'

/**
 * The actions of each release after launch, in mainnet's order.
 *
 * @example
 * RELEASE_ACTIONS['1.0.1'] // OperatorsRegistry 1.0.1, then River 1.0.1 with initRiverV1_2
 */
export const RELEASE_ACTIONS: Record<Exclude<Release, '0.4.0'>, ReleaseAction[]> = {
  '0.5.0': [
    { kind: 'upgrade', proxy: 'river', version: '0.5.0' },
    { kind: 'adminCall', proxy: 'river', fn: 'setCoverageFund' },
    { kind: 'upgrade', proxy: 'allowlist', version: '0.5.0' },
  ],
  '1.0.0': [
    { kind: 'deployProxy', proxy: 'redeemManager', version: '1.0.0', init: 'initializeRedeemManagerV1' },
    { kind: 'upgrade', proxy: 'withdraw', version: '1.0.0', init: 'initializeWithdrawV1' },
    { kind: 'upgrade', proxy: 'operatorsRegistry', version: '1.0.0', init: 'initOperatorsRegistryV1_1' },
    { kind: 'upgrade', proxy: 'oracle', version: '1.0.0', init: 'initOracleV1_1' },
    { kind: 'upgrade', proxy: 'river', version: '1.0.0', init: 'initRiverV1_1' },
    { kind: 'upgrade', proxy: 'elFeeRecipient', version: '1.0.0' },
    { kind: 'adminCall', proxy: 'operatorsRegistry', fn: 'forceFundedValidatorKeysEventEmission' },
  ],
  '1.0.1': [
    { kind: 'upgrade', proxy: 'operatorsRegistry', version: '1.0.1' },
    { kind: 'upgrade', proxy: 'river', version: '1.0.1', init: 'initRiverV1_2' },
  ],
  '1.1.0': [
    { kind: 'upgrade', proxy: 'operatorsRegistry', version: '1.1.0' },
    { kind: 'upgrade', proxy: 'redeemManager', version: '1.1.0' },
  ],
  '1.2.1': [
    { kind: 'upgrade', proxy: 'allowlist', version: '1.2.1', init: 'initAllowlistV1_1' },
    { kind: 'upgrade', proxy: 'coverageFund', version: '1.2.1' },
    { kind: 'upgrade', proxy: 'elFeeRecipient', version: '1.2.1' },
    { kind: 'upgrade', proxy: 'operatorsRegistry', version: '1.2.1' },
    { kind: 'upgrade', proxy: 'oracle', version: '1.2.1' },
    { kind: 'upgrade', proxy: 'redeemManager', version: '1.2.1', init: 'initializeRedeemManagerV1_2' },
    { kind: 'upgrade', proxy: 'river', version: '1.2.1' },
    { kind: 'adminCall', proxy: 'river', fn: 'setKeeper' },
    { kind: 'upgrade', proxy: 'withdraw', version: '1.2.1' },
  ],
}

/** The launch (0.4.0) version of each launch proxy (the CoverageFund's first implementation is 0.5.0). */
export const LAUNCH_VERSION: Record<ProtocolProxy, ProtocolVersion | null> = {
  river: '0.4.0',
  oracle: '0.4.0',
  allowlist: '0.4.0',
  redeemManager: null,
  operatorsRegistry: '0.4.0',
  withdraw: '0.4.0',
  elFeeRecipient: '0.4.0',
  coverageFund: '0.5.0',
}

/** The release days of a history after launch (day indices; -1: applied in the deploy block). */
export type ReleaseDays = Record<Exclude<Release, '0.4.0'>, number>

/** The parameters River 1.0.0's migration and the 0.4.0 Oracle take (mainnet's, finality aside). */
export const CL_SPEC = {
  epochsPerFrame: 225n,
  slotsPerEpoch: 32n,
  secondsPerSlot: 12n,
  genesisTime: 1_606_824_023n,
  /** epochs a report's epoch must be behind the current one (River 1.x) */
  epochsToAssumedFinality: 4n,
} as const
/** Report bounds: 10 %/yr of growth at most (EL fees above it wait), 5 % of loss at most. */
export const REPORT_BOUNDS = { annualAprUpperBound: 1000n, relativeLowerBound: 500n } as const
/** River 1.x's daily committable limits: 3,200 ETH, or 10 % of the pool when more. */
export const COMMITTABLE_LIMITS = {
  minDailyNetCommittableAmount: 3_200n * 10n ** 18n,
  maxDailyRelativeCommittableAmount: 1_000n,
} as const

/** The address of the beacon deposit contract on mainnet, where the devnet puts its stub. */
export const DEPOSIT_CONTRACT_ADDRESS: Address = '0x00000000219ab540356cBB839Cbe05303d7705Fa'
/**
 * The deposit contract stub's runtime code: it accepts any call with any value and returns 32 zero bytes, so
 * `get_deposit_root()` is zero (River 1.2.1 compares it with the keeper's) and `deposit(...)` keeps the ETH.
 */
export const DEPOSIT_CONTRACT_STUB = '0x60206000f3' as const
