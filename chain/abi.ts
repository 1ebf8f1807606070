import { parseAbi } from 'viem'

/**
 * Mainnet ABIs of the events and calls the service uses (PROTOCOL.md). The devnet's simulator
 * contracts emit exactly these signatures, so one follower reads both chains.
 */
export const riverAbi = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event UserDeposit(address indexed depositor, address indexed recipient, uint256 amount)',
  'struct ConsensusLayerReport { uint256 epoch; uint256 validatorsBalance; uint256 validatorsSkimmedBalance; uint256 validatorsExitedBalance; uint256 validatorsExitingBalance; uint32 validatorsCount; uint32[] stoppedValidatorCountPerOperator; bool rebalanceDepositToRedeemMode; bool slashingContainmentMode; }',
  'struct ConsensusLayerDataReportingTrace { uint256 rewards; uint256 pulledELFees; uint256 pulledRedeemManagerExceedingEthBuffer; uint256 pulledCoverageFunds; }',
  'event ProcessedConsensusLayerReport(ConsensusLayerReport report, ConsensusLayerDataReportingTrace trace)',
  'event RewardsEarned(address indexed collector, uint256 oldTotalUnderlyingBalance, uint256 oldTotalSupply, uint256 newTotalUnderlyingBalance, uint256 newTotalSupply)',
  'event SetGlobalFee(uint256 fee)',
  'event PulledELFees(uint256 amount)',
  'event PulledCoverageFunds(uint256 amount)',
  'event PulledRedeemManagerExceedingEth(uint256 amount)',
  'function totalSupply() view returns (uint256)',
  'function totalUnderlyingSupply() view returns (uint256)',
  'function balanceOf(address owner) view returns (uint256)',
  'function underlyingBalanceFromShares(uint256 shares) view returns (uint256)',
  'function sharesFromUnderlyingBalance(uint256 underlyingBalance) view returns (uint256)',
  'function getGlobalFee() view returns (uint256)',
])

export const redeemManagerAbi = parseAbi([
  'event RequestedRedeem(address indexed recipient, uint256 height, uint256 amount, uint256 maxRedeemableEth, uint32 id)',
  'event ReportedWithdrawal(uint256 height, uint256 amount, uint256 ethAmount, uint32 id)',
  'event SatisfiedRedeemRequest(uint32 indexed redeemRequestId, uint32 indexed withdrawalEventId, uint256 lsEthAmountSatisfied, uint256 ethAmountSatisfied, uint256 lsEthAmountRemaining, uint256 ethAmountExceeding)',
  'event ClaimedRedeemRequest(uint32 indexed redeemRequestId, address indexed recipient, uint256 ethAmount, uint256 lsEthAmount, uint256 remainingLsEthAmount)',
  'struct RedeemRequest { uint256 amount; uint256 maxRedeemableEth; address recipient; uint256 height; address initiator; }',
  'struct WithdrawalEvent { uint256 amount; uint256 withdrawnEth; uint256 height; }',
  'function getRedeemRequestCount() view returns (uint256)',
  'function getRedeemRequestDetails(uint32 redeemRequestId) view returns (RedeemRequest)',
  'function getWithdrawalEventCount() view returns (uint256)',
  'function getWithdrawalEventDetails(uint32 withdrawalEventId) view returns (WithdrawalEvent)',
  'function resolveRedeemRequests(uint32[] redeemRequestIds) view returns (int64[] withdrawalEventIds)',
  'function getRedeemDemand() view returns (uint256)',
  'function getBufferedExceedingEth() view returns (uint256)',
])

export const allowlistAbi = parseAbi([
  'event SetAllowlistPermissions(address[] accounts, uint256[] permissions)',
  'function setAllowPermissions(address[] accounts, uint256[] permissions)',
  'function setDenyPermissions(address[] accounts, uint256[] permissions)',
  'function getPermissions(address account) view returns (uint256)',
  'function isAllowed(address account, uint256 mask) view returns (bool)',
  'function isDenied(address account) view returns (bool)',
  'function getAllower() view returns (address)',
  'function getDenier() view returns (address)',
])

/**
 * River before 1.0.0 (implementations 0.4.0 and 0.5.0, October 2022 to mid-2023): the daily oracle report was
 * this event, emitted by River in the report's transaction. `roundId` is the report's beacon epoch as bytes32
 * (the 0.4 Oracle passes `bytes32(epochId)`); `validatorTotalBalance` is in wei. River 1.x implementations still
 * declare the event but emit `ProcessedConsensusLayerReport` instead.
 */
export const riverLegacyAbi = parseAbi([
  'event ConsensusLayerDataUpdate(uint256 validatorCount, uint256 validatorTotalBalance, bytes32 roundId)',
  'function getCLValidatorCount() view returns (uint256)',
  'function getCLValidatorTotalBalance() view returns (uint256)',
  'function getDepositedValidatorCount() view returns (uint256)',
])

/** The names of the oracle report event of every River version: 1.0.0 on, and before it. */
export const REPORT_EVENT_NAMES = ['ProcessedConsensusLayerReport', 'ConsensusLayerDataUpdate'] as const

/**
 * The oracle report events of every River version, for a log query of reports only: `ProcessedConsensusLayerReport`
 * (River 1.0.0 on) and `ConsensusLayerDataUpdate` (0.4.0 and 0.5.0).
 */
export const riverReportEventsAbi = [...riverAbi, ...riverLegacyAbi].filter(
  (item) => item.type === 'event' && (REPORT_EVENT_NAMES as readonly string[]).includes(item.name),
)

/**
 * The 0.4.0 Oracle's report events: `CLReported` for each member's vote, `PostTotalShares` after a quorum's
 * report reached River (post and previous total ETH, seconds since the previous report, total shares).
 */
export const oracleLegacyAbi = parseAbi([
  'event CLReported(uint256 epochId, uint128 newCLBalance, uint32 newCLValidatorCount, address oracleMember)',
  'event PostTotalShares(uint256 postTotalEth, uint256 prevTotalEth, uint256 timeElapsed, uint256 totalShares)',
])

/**
 * The 1.x Oracle's (1.0.0 on) event of each member's vote it registered: `variant` is the hash of the report
 * voted, `voteCount` the votes that variant holds with this one, `quorum` the votes it needs (the vote that
 * reaches it runs River's report in the same transaction). The 0.4.0 Oracle's vote is `CLReported`
 * (`oracleLegacyAbi`).
 */
export const oracleAbi = parseAbi([
  'struct ConsensusLayerReport { uint256 epoch; uint256 validatorsBalance; uint256 validatorsSkimmedBalance; uint256 validatorsExitedBalance; uint256 validatorsExitingBalance; uint32 validatorsCount; uint32[] stoppedValidatorCountPerOperator; bool rebalanceDepositToRedeemMode; bool slashingContainmentMode; }',
  'event ReportedConsensusLayerData(address indexed member, bytes32 indexed variant, ConsensusLayerReport report, uint256 voteCount, uint256 quorum)',
])

/**
 * The Allowlist's write before 1.2.1 (implementations 0.4.0 and 0.5.0): `allow`, selector 0xe580d994. 0.4.0's
 * `SetAllowlistPermissions` declared `accounts` indexed (see `chain/log-decoding.ts`).
 */
export const allowlistLegacyAbi = parseAbi(['function allow(address[] accounts, uint256[] permissions)'])

/**
 * The protocol's Firewall (AllowlistFirewall on mainnet): every call it does not declare is forwarded with its
 * calldata unchanged to `destination()` when the sender is its admin, or its executor for a selector the
 * admin allowed (`executorCanCall`).
 */
export const firewallAbi = parseAbi([
  'function getAdmin() view returns (address)',
  'function executor() view returns (address)',
  'function destination() view returns (address)',
  'function executorCanCall(bytes4 selector) view returns (bool)',
])

/** The event of an EIP-1967 proxy whose implementation changed (every protocol proxy emits it). */
export const proxyAbi = parseAbi(['event Upgraded(address indexed implementation)'])

/** EIP-1967 storage slot of a proxy's implementation: keccak256('eip1967.proxy.implementation') - 1. */
export const EIP1967_IMPLEMENTATION_SLOT =
  '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc'

/**
 * Minimal operators registry reads (per-operator funded validators, for the operator fee split: active =
 * funded - stopped from the report). The struct is the OperatorsV2 layout of implementations 1.0.0 to 1.2.1 (and
 * of the devnet registry); 0.4.0 returned `operatorsRegistryLegacyAbi`'s.
 */
export const operatorsRegistryAbi = parseAbi([
  'struct Operator { uint32 limit; uint32 funded; uint32 requestedExits; uint32 keys; uint64 latestKeysEditBlockNumber; bool active; string name; address operator; }',
  'function getOperatorCount() view returns (uint256)',
  'function getOperator(uint256 index) view returns (Operator)',
  'function getStoppedValidatorCountPerOperator() view returns (uint32[])',
])

/**
 * The OperatorsRegistry 0.4.0 read (before River 1.0.0): the OperatorsV1 layout, with 256-bit counts and the
 * operator's stopped count kept in the registry (validators could not exit before withdrawals were enabled).
 */
export const operatorsRegistryLegacyAbi = parseAbi([
  'struct Operator { bool active; string name; address operator; uint256 limit; uint256 funded; uint256 keys; uint256 stopped; uint256 latestKeysEditBlockNumber; }',
  'function getOperatorCount() view returns (uint256)',
  'function getOperator(uint256 index) view returns (Operator)',
])

/** Allowlist permission masks (PROTOCOL.md), defined in the domain module `common/permissions.ts`. */
export { PERMISSION } from '../common/permissions.ts'

/** topic0 of ProcessedConsensusLayerReport, as published. */
export const PROCESSED_REPORT_TOPIC = '0x49ac0d2bb2a688ca460f7993eb93eccd3b9c9188da6b0727e9a409cf8b105875'
