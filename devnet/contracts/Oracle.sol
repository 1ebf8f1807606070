// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Shared.sol";

/// @title Oracle (devnet)
/// @notice Oracle members post the daily ConsensusLayerReport; with the devnet quorum of 1 every accepted
///         report is forwarded to River at once. Mainnet collects votes from several members first.
contract Oracle {
    event AddMember(address indexed member);
    event RemoveMember(address indexed member);
    event ReportedConsensusLayerData(
        address indexed member, bytes32 indexed variant, ConsensusLayerReport report, uint256 voteCount, uint256 quorum
    );

    error Unauthorized(address caller);
    error InvalidZeroAddress();
    error EpochTooOld(uint256 providedEpoch, uint256 lastReportedEpoch);

    address public immutable admin;
    address public immutable river;
    mapping(address => bool) public isMember;
    uint256 public lastReportedEpoch;

    constructor(address admin_, address river_) {
        if (admin_ == address(0) || river_ == address(0)) revert InvalidZeroAddress();
        admin = admin_;
        river = river_;
    }

    function addMember(address member) external {
        if (msg.sender != admin) revert Unauthorized(msg.sender);
        if (member == address(0)) revert InvalidZeroAddress();
        isMember[member] = true;
        emit AddMember(member);
    }

    function removeMember(address member) external {
        if (msg.sender != admin) revert Unauthorized(msg.sender);
        isMember[member] = false;
        emit RemoveMember(member);
    }

    function getQuorum() external pure returns (uint256) {
        return 1;
    }

    function reportConsensusLayerData(ConsensusLayerReport calldata report) external {
        if (!isMember[msg.sender]) revert Unauthorized(msg.sender);
        if (report.epoch <= lastReportedEpoch) revert EpochTooOld(report.epoch, lastReportedEpoch);
        lastReportedEpoch = report.epoch;
        emit ReportedConsensusLayerData(msg.sender, keccak256(abi.encode(report)), report, 1, 1);
        IRiver(river).setConsensusLayerData(report);
    }
}
