// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// Types, masks, interfaces and the initializer base shared by the devnet contracts. The two report structs
// have exactly the mainnet field order, so ProcessedConsensusLayerReport hashes to the published topic0.

/// @notice One oracle report (mainnet IOracleManagerV1.ConsensusLayerReport).
struct ConsensusLayerReport {
    uint256 epoch;
    uint256 validatorsBalance;
    uint256 validatorsSkimmedBalance;
    uint256 validatorsExitedBalance;
    uint256 validatorsExitingBalance;
    uint32 validatorsCount;
    uint32[] stoppedValidatorCountPerOperator;
    bool rebalanceDepositToRedeemMode;
    bool slashingContainmentMode;
}

/// @notice What a report did (mainnet IOracleManagerV1.ConsensusLayerDataReportingTrace).
struct ConsensusLayerDataReportingTrace {
    uint256 rewards;
    uint256 pulledELFees;
    uint256 pulledRedeemManagerExceedingEthBuffer;
    uint256 pulledCoverageFunds;
}

/// @notice Allowlist permission masks (mainnet LibAllowlistMasks).
library Masks {
    uint256 internal constant DEPOSIT = 1;
    uint256 internal constant DONATE = 1 << 1;
    uint256 internal constant REDEEM = 1 << 2;
    uint256 internal constant DENY = 1 << 255;
}

interface IAllowlist {
    function isAllowed(address account, uint256 mask) external view returns (bool);
    function isDenied(address account) external view returns (bool);
}

/// @notice The initializer versions of a contract behind a proxy (a proxy runs no constructor): each
///         `init(n)` function runs once, when the stored version is n, and leaves n + 1 (mainnet Initializable).
///         Every devnet contract behind a proxy inherits this first, so its storage starts at the same slot
///         in every implementation version.
abstract contract Initializable {
    event Initialize(uint256 version, bytes cdata);

    error InvalidInitialization(uint256 version, uint256 expectedVersion);

    uint256 internal initializedVersion;

    modifier init(uint256 version) {
        if (version != initializedVersion) revert InvalidInitialization(version, initializedVersion);
        initializedVersion = version + 1;
        emit Initialize(version, msg.data);
        _;
    }
}

/// @notice River as the 0.4 / 0.5 Oracle sees it (mainnet IRiverV1 before 1.0.0).
interface IRiverV0 {
    function setConsensusLayerData(
        uint256 validatorCount,
        uint256 validatorTotalBalance,
        bytes32 roundId,
        uint256 maxIncrease
    ) external;
    function totalUnderlyingSupply() external view returns (uint256);
    function totalSupply() external view returns (uint256);
}

interface IRiver {
    function underlyingBalanceFromShares(uint256 shares) external view returns (uint256);
    function getAllowlist() external view returns (address);
    function setConsensusLayerData(ConsensusLayerReport calldata report) external;
    function sendCLFunds() external payable;
    function sendELFees() external payable;
    function sendRedeemManagerExceedingFunds() external payable;
}

interface IRedeemManager {
    function requestRedeem(uint256 lsEthAmount, address recipient) external returns (uint32);
    function reportWithdraw(uint256 lsEthWithdrawable) external payable;
    function pullExceedingEth(uint256 max) external;
    function getRedeemDemand() external view returns (uint256);
    function resolveRedeemRequests(uint32[] calldata redeemRequestIds) external view returns (int64[] memory);
    function claimRedeemRequests(
        uint32[] calldata redeemRequestIds,
        uint32[] calldata withdrawalEventIds,
        bool skipAlreadyClaimed,
        uint16 depth
    ) external returns (uint8[] memory);
}

interface IOperatorsRegistry {
    function fundValidators(uint256 count) external;
    function demandValidatorExits(uint256 count, uint256 depositedValidatorCount) external;
    function reportStoppedValidatorCounts(uint32[] calldata stoppedValidatorCounts, uint256 depositedValidatorCount)
        external;
    function getStoppedAndRequestedExitCounts() external view returns (uint32, uint256);
}

interface IELFeeRecipient {
    function pullELFees(uint256 max) external;
}

interface IWithdraw {
    function pullEth(uint256 amount) external;
}

interface IDepositContract {
    function deposit(uint256 validatorCount) external payable;
}

/// @title Administrable (devnet): one admin, handed over in two steps (propose, then accept), as mainnet's
/// @notice Storage: `admin`, then `pendingAdmin`; a contract behind a proxy inherits it after Initializable, so
///         every version of it keeps the same slots.
abstract contract Administrable {
    event SetAdmin(address indexed admin);
    event SetPendingAdmin(address indexed pendingAdmin);

    error Unauthorized(address caller);

    address internal admin;
    address internal pendingAdmin;

    modifier onlyAdmin() {
        if (msg.sender != admin) revert Unauthorized(msg.sender);
        _;
    }

    function getAdmin() external view returns (address) {
        return admin;
    }

    function getPendingAdmin() external view returns (address) {
        return pendingAdmin;
    }

    function proposeAdmin(address newAdmin) external onlyAdmin {
        pendingAdmin = newAdmin;
        emit SetPendingAdmin(newAdmin);
    }

    function acceptAdmin() external {
        if (msg.sender != pendingAdmin) revert Unauthorized(msg.sender);
        admin = pendingAdmin;
        pendingAdmin = address(0);
        emit SetAdmin(admin);
        emit SetPendingAdmin(address(0));
    }
}
