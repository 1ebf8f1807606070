import { parseAbi } from 'viem'

/**
 * ABIs of the devnet-only calls (deposits, redeems, claims, the oracle report, keeper and admin calls).
 * The mainnet reads and events the service uses live in `chain/abi.ts`.
 */

const CONSENSUS_LAYER_REPORT =
  'struct ConsensusLayerReport { uint256 epoch; uint256 validatorsBalance; uint256 validatorsSkimmedBalance; uint256 validatorsExitedBalance; uint256 validatorsExitingBalance; uint32 validatorsCount; uint32[] stoppedValidatorCountPerOperator; bool rebalanceDepositToRedeemMode; bool slashingContainmentMode; }'

export const devnetRiverAbi = parseAbi([
  'struct Config { address allowlist; address redeemManager; address operatorsRegistry; address oracle; address elFeeRecipient; address withdraw; address depositContract; address collector; address keeper; uint256 globalFee; }',
  'struct StoredConsensusLayerReport { uint256 epoch; uint256 validatorsBalance; uint256 validatorsSkimmedBalance; uint256 validatorsExitedBalance; uint256 validatorsExitingBalance; uint32 validatorsCount; bool rebalanceDepositToRedeemMode; bool slashingContainmentMode; }',
  'function initialize(Config config)',
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
  'function getWithdraw() view returns (address)',
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

export const devnetRedeemManagerAbi = parseAbi([
  'function claimRedeemRequests(uint32[] redeemRequestIds, uint32[] withdrawalEventIds, bool skipAlreadyClaimed, uint16 depth) returns (uint8[] claimStatuses)',
  'error ClaimRecipientIsDenied()',
  'error DoesNotMatch(uint256 redeemRequestId, uint256 withdrawalEventId)',
])

export const devnetAllowlistAbi = parseAbi([
  'function setAllower(address allower, bool enabled)',
  'function setDenier(address newDenier)',
  'function isAllower(address account) view returns (bool)',
  'function getDenier() view returns (address)',
  'function onlyAllowed(address account, uint256 mask) view',
  'error Unauthorized(address caller)',
  'error InvalidCount()',
  'error MismatchedArrayLengths()',
  'error InvalidZeroAddress()',
  'error AttemptToSetDenyPermission()',
  'error AttemptToRemoveDenyPermission()',
  'error Denied(address account)',
])

export const devnetOracleAbi = parseAbi([
  CONSENSUS_LAYER_REPORT,
  'function addMember(address member)',
  'function isMember(address member) view returns (bool)',
  'function reportConsensusLayerData(ConsensusLayerReport report)',
  'function lastReportedEpoch() view returns (uint256)',
])

export const devnetOperatorsRegistryAbi = parseAbi([
  'function setKeeper(address keeper)',
  'function addOperator(string name, address operatorAddress, uint32 keyCount) returns (uint256)',
  'function requestValidatorExits(uint256 count)',
  'function getCurrentValidatorExitsDemand() view returns (uint256)',
  'function getTotalValidatorExitsRequested() view returns (uint256)',
  'function getStoppedAndRequestedExitCounts() view returns (uint32, uint256)',
  'event FundedValidators(uint256 indexed index, uint256 count)',
  'event RequestedValidatorExits(uint256 indexed index, uint256 count)',
  'event UpdatedRequestedValidatorExitsUponStopped(uint256 indexed index, uint32 oldRequestedExits, uint32 newRequestedExits)',
])
