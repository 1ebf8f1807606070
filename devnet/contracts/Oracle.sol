// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Shared.sol";

/// @title OracleBase (devnet): oracle members and the last reported epoch, common to every version
/// @notice The devnet's quorum is 1: every accepted report is pushed to River at once (mainnet collects votes
///         from several members first). No report bounds, no frame rules beyond "epochs increase".
/// @dev Every Oracle version (OracleV0_4, OracleV1_0, OracleV1_2) inherits this contract and declares no storage of
///      its own, so a proxy upgraded from one version to the next keeps its members and last epoch.
abstract contract OracleBase is Initializable {
    event SetAdmin(address indexed admin);
    event SetRiver(address river);
    event AddMember(address indexed member);
    event RemoveMember(address indexed member);
    event SetQuorum(uint256 newQuorum);
    event SetSpec(uint64 epochsPerFrame, uint64 slotsPerEpoch, uint64 secondsPerSlot, uint64 genesisTime);

    error Unauthorized(address caller);
    error InvalidZeroAddress();
    error InvalidQuorum(uint256 quorum);
    error EpochTooOld(uint256 providedEpoch, uint256 lastReportedEpoch);

    address internal admin;
    address internal river;
    mapping(address => bool) internal members;
    uint256 internal lastReportedEpoch;
    uint64 internal slotsPerEpoch;
    uint64 internal secondsPerSlot;

    modifier onlyAdmin() {
        if (msg.sender != admin) revert Unauthorized(msg.sender);
        _;
    }

    /// @notice Initializer version 0 (mainnet's signature). The devnet keeps slots per epoch and seconds per
    ///         slot (for PostTotalShares' time elapsed) and ignores the frame, genesis and report bounds.
    function initOracleV1(
        address river_,
        address admin_,
        uint64 epochsPerFrame,
        uint64 slotsPerEpoch_,
        uint64 secondsPerSlot_,
        uint64 genesisTime,
        uint256,
        uint256
    ) external init(0) {
        if (river_ == address(0) || admin_ == address(0)) revert InvalidZeroAddress();
        river = river_;
        admin = admin_;
        slotsPerEpoch = slotsPerEpoch_;
        secondsPerSlot = secondsPerSlot_;
        emit SetRiver(river_);
        emit SetAdmin(admin_);
        emit SetSpec(epochsPerFrame, slotsPerEpoch_, secondsPerSlot_, genesisTime);
    }

    /// @notice Adds a member; the new quorum must stay 1 on the devnet.
    function addMember(address member, uint256 newQuorum) external onlyAdmin {
        if (member == address(0)) revert InvalidZeroAddress();
        if (newQuorum != 1) revert InvalidQuorum(newQuorum);
        members[member] = true;
        emit AddMember(member);
        emit SetQuorum(newQuorum);
    }

    function removeMember(address member, uint256 newQuorum) external onlyAdmin {
        if (newQuorum != 1) revert InvalidQuorum(newQuorum);
        members[member] = false;
        emit RemoveMember(member);
        emit SetQuorum(newQuorum);
    }

    function isMember(address member) external view returns (bool) {
        return members[member];
    }

    function getQuorum() external pure returns (uint256) {
        return 1;
    }

    function getAdmin() external view returns (address) {
        return admin;
    }

    function getRiver() external view returns (address) {
        return river;
    }

    function _acceptEpoch(uint256 epoch) internal returns (uint256 previousEpoch) {
        if (!members[msg.sender]) revert Unauthorized(msg.sender);
        previousEpoch = lastReportedEpoch;
        if (epoch <= previousEpoch) revert EpochTooOld(epoch, previousEpoch);
        lastReportedEpoch = epoch;
    }
}

/// @title Oracle 0.4.0 shape (devnet)
/// @notice Members post `reportConsensusLayerData(epochId, clValidatorsBalance in gwei, clValidatorCount)`; the
///         Oracle emits CLReported (balance in wei), pushes `(count, balance x 1e9, bytes32(epochId), maxIncrease)`
///         to River, then emits PostTotalShares(U after, U before, seconds since the previous report's epoch, S).
contract OracleV0_4 is OracleBase {
    event CLReported(uint256 epochId, uint128 newCLBalance, uint32 newCLValidatorCount, address oracleMember);
    event PostTotalShares(uint256 postTotalEth, uint256 prevTotalEth, uint256 timeElapsed, uint256 totalShares);

    /// @dev GWEI -> wei, as on mainnet (DENOMINATION_OFFSET)
    uint128 internal constant DENOMINATION_OFFSET = 1e9;

    function reportConsensusLayerData(uint256 epochId, uint64 clValidatorsBalance, uint32 clValidatorCount) external {
        uint256 previousEpoch = _acceptEpoch(epochId);
        uint128 balance = DENOMINATION_OFFSET * uint128(clValidatorsBalance);
        emit CLReported(epochId, balance, clValidatorCount, msg.sender);
        IRiverV0 riverV0 = IRiverV0(river);
        uint256 prevTotalEth = riverV0.totalUnderlyingSupply();
        uint256 timeElapsed = (epochId - previousEpoch) * slotsPerEpoch * secondsPerSlot;
        // DEVIATION: no APR upper bound; the margin lets River pull every EL fee
        riverV0.setConsensusLayerData(clValidatorCount, balance, bytes32(epochId), type(uint128).max);
        emit PostTotalShares(riverV0.totalUnderlyingSupply(), prevTotalEth, timeElapsed, riverV0.totalSupply());
    }

    function getLastCompletedEpochId() external view returns (uint256) {
        return lastReportedEpoch;
    }
}

/// @title Oracle 1.0.0 shape (devnet): members post the ConsensusLayerReport struct, forwarded to River at once
contract OracleV1_0 is OracleBase {
    event ReportedConsensusLayerData(
        address indexed member, bytes32 indexed variant, ConsensusLayerReport report, uint256 voteCount, uint256 quorum
    );

    /// @notice The 1.0 upgrade's initializer (version 1): nothing to migrate on the devnet.
    function initOracleV1_1() external init(1) {}

    function reportConsensusLayerData(ConsensusLayerReport calldata report) external {
        _acceptEpoch(report.epoch);
        emit ReportedConsensusLayerData(msg.sender, keccak256(abi.encode(report)), report, 1, 1);
        IRiver(river).setConsensusLayerData(report);
    }

    function getLastReportedEpochId() external view returns (uint256) {
        return lastReportedEpoch;
    }
}

/// @title Oracle 1.2.1 shape (devnet): 1.0.0 with version()
contract OracleV1_2 is OracleV1_0 {
    function version() external pure returns (string memory) {
        return "1.2.1";
    }
}
