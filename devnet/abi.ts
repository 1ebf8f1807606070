import { parseAbi } from 'viem'

/**
 * ABIs of the calls the devnet and its tests send to the protocol (deposits, redeems, claims, the oracle report,
 * keeper and admin calls), each as a real version declares it (test/abi-fixtures.test.ts checks them), and of
 * the devnet's own price feeds. The mainnet reads and events the service uses live in `chain/abi.ts`.
 */

const CONSENSUS_LAYER_REPORT =
  'struct ConsensusLayerReport { uint256 epoch; uint256 validatorsBalance; uint256 validatorsSkimmedBalance; uint256 validatorsExitedBalance; uint256 validatorsExitingBalance; uint32 validatorsCount; uint32[] stoppedValidatorCountPerOperator; bool rebalanceDepositToRedeemMode; bool slashingContainmentMode; }'

export const devnetRiverAbi = parseAbi([
  'struct StoredConsensusLayerReport { uint256 epoch; uint256 validatorsBalance; uint256 validatorsSkimmedBalance; uint256 validatorsExitedBalance; uint256 validatorsExitingBalance; uint32 validatorsCount; bool rebalanceDepositToRedeemMode; bool slashingContainmentMode; }',
  'function initRiverV1_1(address redeemManager, uint64 epochsPerFrame, uint64 slotsPerEpoch, uint64 secondsPerSlot, uint64 genesisTime, uint64 epochsToAssumedFinality, uint256 annualAprUpperBound, uint256 relativeLowerBound, uint128 maxDailyNetCommittableAmount, uint128 maxDailyRelativeCommittableAmount)',
  'function initRiverV1_2()',
  'function getAdmin() view returns (address)',
  'function version() pure returns (string)',
  'function deposit() payable',
  'function depositAndTransfer(address recipient) payable',
  'function depositToConsensusLayer(uint256 validatorCount)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function transferFrom(address from, address to, uint256 value) returns (bool)',
  'function approve(address spender, uint256 value) returns (bool)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function requestRedeem(uint256 lsEthAmount, address recipient) returns (uint32 redeemRequestId)',
  'function claimRedeemRequests(uint32[] redeemRequestIds, uint32[] withdrawalEventIds) returns (uint8[] claimStatuses)',
  'function resolveRedeemRequests(uint32[] redeemRequestIds) view returns (int64[])',
  'function setGlobalFee(uint256 fee)',
  'function setCollector(address collector)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function balanceOfUnderlying(address owner) view returns (uint256)',
  'function getCollector() view returns (address)',
  'function getAllowlist() view returns (address)',
  'function getRedeemManager() view returns (address)',
  'function getOperatorsRegistry() view returns (address)',
  'function getOracle() view returns (address)',
  'function getELFeeRecipient() view returns (address)',
  'function getKeeper() view returns (address)',
  'function getBalanceToDeposit() view returns (uint256)',
  'function getBalanceToRedeem() view returns (uint256)',
  'function getDepositedValidatorCount() view returns (uint256)',
  'function getLastConsensusLayerReport() view returns (StoredConsensusLayerReport)',
  'event PulledCLFunds(uint256 pulledSkimmedEthAmount, uint256 pullExitedEthAmount)',
  'event ReportedRedeemManager(uint256 redeemManagerDemand, uint256 suppliedRedeemManagerDemand, uint256 suppliedRedeemManagerDemandInEth)',
  'error Unauthorized(address caller)',
  'error Denied(address account)',
  'error InvalidFee()',
  'error BalanceTooLow()',
])

/** River 0.4.0 / 0.5.0: the report entry the 0.4 Oracle calls (reads are in `riverLegacyAbi`, chain/abi.ts). */
export const devnetRiverLegacyAbi = parseAbi([
  'function setConsensusLayerData(uint256 validatorCount, uint256 validatorTotalBalance, bytes32 roundId, uint256 maxIncrease)',
  'function getCoverageFund() view returns (address)',
])

export const devnetRedeemManagerAbi = parseAbi([
  'function initializeRedeemManagerV1(address river)',
  'function initializeRedeemManagerV1_2()',
  'function getRiver() view returns (address)',
  'function claimRedeemRequests(uint32[] redeemRequestIds, uint32[] withdrawalEventIds, bool skipAlreadyClaimed, uint16 depth) returns (uint8[] claimStatuses)',
  'error ClaimRecipientIsDenied()',
  'error DoesNotMatch(uint256 redeemRequestId, uint256 withdrawalEventId)',
])

export const devnetAllowlistAbi = parseAbi([
  'function initAllowlistV1(address admin, address allower)',
  'function initAllowlistV1_1(address denier)',
  'function setAllower(address allower)',
  'function setDenier(address newDenier)',
  'function getAdmin() view returns (address)',
  'function getDenier() view returns (address)',
  'function hasPermission(address account, uint256 mask) view returns (bool)',
  'function onlyAllowed(address account, uint256 mask) view',
  'event SetAllower(address indexed allower)',
  'event SetDenier(address indexed denier)',
  'error Unauthorized(address caller)',
  'error InvalidCount()',
  'error MismatchedArrayLengths()',
  'error InvalidZeroAddress()',
  'error AttemptToSetDenyPermission()',
  'error AttemptToRemoveDenyPermission()',
  'error InvalidAlloweeCount()',
  'error MismatchedAlloweeAndStatusCount()',
  'error Denied(address account)',
])

/** Allowlist 0.4.0: SetAllowlistPermissions with `accounts` indexed (0.5.0 dropped the flag). */
export const devnetAllowlistV04EventAbi = parseAbi([
  'event SetAllowlistPermissions(address[] indexed accounts, uint256[] permissions)',
])

export const devnetOracleAbi = parseAbi([
  CONSENSUS_LAYER_REPORT,
  'function initOracleV1(address river, address admin, uint64 epochsPerFrame, uint64 slotsPerEpoch, uint64 secondsPerSlot, uint64 genesisTime, uint256 annualAprUpperBound, uint256 relativeLowerBound)',
  'function initOracleV1_1()',
  'function addMember(address member, uint256 newQuorum)',
  'function isMember(address member) view returns (bool)',
  'function reportConsensusLayerData(ConsensusLayerReport report)',
  'function getLastReportedEpochId() view returns (uint256)',
  'function getRiver() view returns (address)',
])

/** Oracle 0.4.0: the report in gwei, and its last epoch. */
export const devnetOracleLegacyAbi = parseAbi([
  'function reportConsensusLayerData(uint256 epochId, uint64 clValidatorsBalance, uint32 clValidatorCount)',
  'function getLastCompletedEpochId() view returns (uint256)',
])

/** The devnet's EIP-1967 transparent proxy: its functions answer only the proxy admin. */
export const devnetProxyAbi = parseAbi([
  'function upgradeTo(address newImplementation)',
  'function upgradeToAndCall(address newImplementation, bytes data) payable',
  'function changeAdmin(address newAdmin)',
  'function admin() returns (address)',
  'function implementation() returns (address)',
  'event AdminChanged(address previousAdmin, address newAdmin)',
  'error AdminCannotCallImplementation()',
  'error InvalidImplementation(address implementation)',
])

/** The AllowlistFirewall's administration (its reads are `firewallAbi` in chain/abi.ts). */
export const devnetFirewallAbi = parseAbi([
  'function allowExecutor(bytes4 selector, bool canCall)',
  'function setExecutor(address newExecutor)',
  'function proposeAdmin(address newAdmin)',
  'function acceptAdmin()',
  'function getPendingAdmin() view returns (address)',
  'event SetExecutorPermissions(bytes4 selector, bool executorCanCall)',
  'error Unauthorized(address caller)',
])

export const devnetOperatorsRegistryAbi = parseAbi([
  'function initOperatorsRegistryV1(address admin, address river)',
  'function addOperator(string name, address operatorAddress) returns (uint256)',
  'function requestValidatorExits(uint256 count)',
  'function getCurrentValidatorExitsDemand() view returns (uint256)',
  'function getTotalValidatorExitsRequested() view returns (uint256)',
  'function getStoppedAndRequestedExitCounts() view returns (uint32, uint256)',
  'event RequestedValidatorExits(uint256 indexed index, uint256 count)',
  'event UpdatedRequestedValidatorExitsUponStopped(uint256 indexed index, uint32 oldRequestedExits, uint32 newRequestedExits)',
])

/**
 * The devnet's PriceFeed (PriceFeed.sol) beyond the AggregatorV3 reads of chain/price-feeds.ts: the owner's
 * update, its event, and the round lookup.
 */
export const devnetPriceFeedAbi = parseAbi([
  'function updateAnswer(int256 answer)',
  'function owner() view returns (address)',
  'function version() view returns (uint256)',
  'function getRoundData(uint80 roundId) view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
  'event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt)',
  'error Unauthorized(address caller)',
])
