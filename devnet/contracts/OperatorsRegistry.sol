// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Shared.sol";

/// @title OperatorsRegistry (devnet, minimal)
/// @notice Node operators with a name, an address and a funded validator count; exit demand bookkeeping; the
///         stopped validator counts reported by the oracle. getOperator returns the mainnet OperatorsV2 struct
///         shape, but this registry is devnet-specific: there are no validator keys (keys and limit are a
///         plain capacity), and funding picks the operator with the fewest active validators.
contract OperatorsRegistry is IOperatorsRegistry, Initializable {
    struct Operator {
        uint32 limit;
        uint32 funded;
        uint32 requestedExits;
        uint32 keys;
        uint64 latestKeysEditBlockNumber;
        bool active;
        string name;
        address operator;
    }

    event AddedOperator(uint256 indexed index, string name, address indexed operatorAddress);
    event SetAdmin(address indexed admin);
    event SetRiver(address indexed river);
    event SetOperatorStatus(uint256 indexed index, bool active);
    event FundedValidators(uint256 indexed index, uint256 count);
    event SetCurrentValidatorExitsDemand(uint256 previousValidatorExitsDemand, uint256 nextValidatorExitsDemand);
    event SetTotalValidatorExitsRequested(uint256 previousTotalRequestedExits, uint256 newTotalRequestedExits);
    event RequestedValidatorExits(uint256 indexed index, uint256 count);
    event UpdatedRequestedValidatorExitsUponStopped(
        uint256 indexed index, uint32 oldRequestedExits, uint32 newRequestedExits
    );
    event UpdatedStoppedValidators(uint32[] stoppedValidatorCounts);

    error Unauthorized(address caller);
    error InvalidZeroAddress();
    error InvalidEmptyString();
    error OperatorNotFound(uint256 index);
    error NoFundableOperator();
    error NoExitableOperator();
    error InvalidEmptyStoppedValidatorCountsArray();
    error StoppedValidatorCountsTooLong(uint256 length, uint256 operatorCount);
    error InvalidStoppedValidatorCountsSum();
    error StoppedValidatorCountsDecreased();
    error StoppedValidatorCountAboveFundedCount(uint256 operatorIndex, uint32 stoppedCount, uint32 fundedCount);
    error StoppedValidatorCountsAboveDepositedCount(uint256 total, uint256 deposited);

    /// @dev validator capacity (keys and limit) of every operator: the devnet has no validator keys
    uint32 internal constant OPERATOR_CAPACITY = 1_000_000;

    address internal admin;
    address internal river;
    address public keeper;
    Operator[] internal operators;
    /// @dev index 0 is the total, index i + 1 the count of operator i (mainnet layout)
    uint32[] internal stoppedValidators;
    uint256 internal currentValidatorExitsDemand;
    uint256 internal totalValidatorExitsRequested;

    /// @notice Initializer version 0 (mainnet's signature).
    function initOperatorsRegistryV1(address admin_, address river_) external init(0) {
        if (admin_ == address(0) || river_ == address(0)) revert InvalidZeroAddress();
        admin = admin_;
        river = river_;
        emit SetAdmin(admin_);
        emit SetRiver(river_);
    }

    function getAdmin() external view returns (address) {
        return admin;
    }

    function getRiver() external view returns (address) {
        return river;
    }

    modifier onlyAdmin() {
        if (msg.sender != admin) revert Unauthorized(msg.sender);
        _;
    }

    modifier onlyRiver() {
        if (msg.sender != river) revert Unauthorized(msg.sender);
        _;
    }

    // ------------------------------------------------------------------ admin

    function setKeeper(address newKeeper) external onlyAdmin {
        keeper = newKeeper;
    }

    /// @notice Registers an operator with the devnet's fixed capacity (OPERATOR_CAPACITY keys).
    function addOperator(string calldata name, address operatorAddress)
        external
        onlyAdmin
        returns (uint256 index)
    {
        if (operatorAddress == address(0)) revert InvalidZeroAddress();
        if (bytes(name).length == 0) revert InvalidEmptyString();
        index = operators.length;
        operators.push(
            Operator({
                limit: OPERATOR_CAPACITY,
                funded: 0,
                requestedExits: 0,
                keys: OPERATOR_CAPACITY,
                latestKeysEditBlockNumber: uint64(block.number),
                active: true,
                name: name,
                operator: operatorAddress
            })
        );
        emit AddedOperator(index, name, operatorAddress);
    }

    function setOperatorStatus(uint256 index, bool active) external onlyAdmin {
        _get(index).active = active;
        emit SetOperatorStatus(index, active);
    }

    // ------------------------------------------------------------------ reads

    function getOperatorCount() external view returns (uint256) {
        return operators.length;
    }

    function getOperator(uint256 index) external view returns (Operator memory) {
        return _get(index);
    }

    /// @notice Stopped validators per operator (without the leading total), as last reported.
    function getStoppedValidatorCountPerOperator() external view returns (uint32[] memory counts) {
        counts = new uint32[](operators.length);
        for (uint256 i = 0; i < counts.length; ++i) {
            counts[i] = _stopped(i);
        }
    }

    function getCurrentValidatorExitsDemand() external view returns (uint256) {
        return currentValidatorExitsDemand;
    }

    function getTotalValidatorExitsRequested() external view returns (uint256) {
        return totalValidatorExitsRequested;
    }

    /// @notice (total stopped, exits requested from operators + exit demand not yet requested)
    function getStoppedAndRequestedExitCounts() external view returns (uint32, uint256) {
        uint32 totalStopped = stoppedValidators.length == 0 ? 0 : stoppedValidators[0];
        return (totalStopped, totalValidatorExitsRequested + currentValidatorExitsDemand);
    }

    // ------------------------------------------------------------------ River entry points

    /// @notice Funds `count` validators, one at a time, each to the active operator with the fewest active
    ///         (funded - stopped) validators and free capacity (lowest index on ties).
    function fundValidators(uint256 count) external onlyRiver {
        uint256 n = operators.length;
        uint256[] memory active = new uint256[](n);
        uint256[] memory room = new uint256[](n);
        uint256[] memory added = new uint256[](n);
        for (uint256 i = 0; i < n; ++i) {
            Operator storage op = operators[i];
            active[i] = op.funded - _stopped(i);
            room[i] = op.active ? op.limit - op.funded : 0;
        }
        for (uint256 k = 0; k < count; ++k) {
            uint256 best = type(uint256).max;
            for (uint256 i = 0; i < n; ++i) {
                if (added[i] >= room[i]) continue;
                if (best == type(uint256).max || active[i] < active[best]) best = i;
            }
            if (best == type(uint256).max) revert NoFundableOperator();
            active[best] += 1;
            added[best] += 1;
        }
        for (uint256 i = 0; i < n; ++i) {
            if (added[i] == 0) continue;
            operators[i].funded += uint32(added[i]);
            emit FundedValidators(i, added[i]);
        }
    }

    /// @notice Adds exit demand, bounded by the validators not already asked to exit.
    function demandValidatorExits(uint256 count, uint256 depositedValidatorCount) external onlyRiver {
        uint256 alreadyAsked = totalValidatorExitsRequested + currentValidatorExitsDemand;
        uint256 room = depositedValidatorCount > alreadyAsked ? depositedValidatorCount - alreadyAsked : 0;
        if (count > room) count = room;
        if (count == 0) return;
        _setCurrentValidatorExitsDemand(currentValidatorExitsDemand + count);
    }

    /// @notice Stores the oracle's stopped counts ([total, op0, op1, ...]); stops beyond an operator's requested
    ///         exits count as unsolicited exits and reduce the exit demand.
    function reportStoppedValidatorCounts(uint32[] calldata counts, uint256 depositedValidatorCount)
        external
        onlyRiver
    {
        if (counts.length == 0) revert InvalidEmptyStoppedValidatorCountsArray();
        if (counts.length - 1 > operators.length) {
            revert StoppedValidatorCountsTooLong(counts.length, operators.length);
        }
        uint256 sum = 0;
        uint256 unsolicited = 0;
        for (uint256 i = 0; i + 1 < counts.length; ++i) {
            uint32 stopped = counts[i + 1];
            Operator storage op = operators[i];
            if (stopped < _stopped(i)) revert StoppedValidatorCountsDecreased();
            if (stopped > op.funded) revert StoppedValidatorCountAboveFundedCount(i, stopped, op.funded);
            if (stopped > op.requestedExits) {
                unsolicited += stopped - op.requestedExits;
                emit UpdatedRequestedValidatorExitsUponStopped(i, op.requestedExits, stopped);
                op.requestedExits = stopped;
            }
            sum += stopped;
        }
        if (sum != counts[0]) revert InvalidStoppedValidatorCountsSum();
        if (sum > depositedValidatorCount) revert StoppedValidatorCountsAboveDepositedCount(sum, depositedValidatorCount);
        if (stoppedValidators.length > 0 && counts[0] < stoppedValidators[0]) revert StoppedValidatorCountsDecreased();
        if (unsolicited > 0) {
            _setTotalValidatorExitsRequested(totalValidatorExitsRequested + unsolicited);
            uint256 demand = currentValidatorExitsDemand;
            _setCurrentValidatorExitsDemand(demand > unsolicited ? demand - unsolicited : 0);
        }
        stoppedValidators = counts;
        emit UpdatedStoppedValidators(counts);
    }

    // ------------------------------------------------------------------ keeper

    /// @notice Turns up to `count` of the exit demand into per-operator exit requests, one at a time to the
    ///         operator with the most validators not yet asked to exit (lowest index on ties).
    function requestValidatorExits(uint256 count) external {
        if (msg.sender != keeper && msg.sender != admin) revert Unauthorized(msg.sender);
        if (count > currentValidatorExitsDemand) count = currentValidatorExitsDemand;
        if (count == 0) return;
        uint256 n = operators.length;
        uint256[] memory exitable = new uint256[](n);
        uint256[] memory added = new uint256[](n);
        for (uint256 i = 0; i < n; ++i) {
            exitable[i] = operators[i].funded - operators[i].requestedExits;
        }
        for (uint256 k = 0; k < count; ++k) {
            uint256 best = type(uint256).max;
            for (uint256 i = 0; i < n; ++i) {
                if (exitable[i] == 0) continue;
                if (best == type(uint256).max || exitable[i] > exitable[best]) best = i;
            }
            if (best == type(uint256).max) revert NoExitableOperator();
            exitable[best] -= 1;
            added[best] += 1;
        }
        for (uint256 i = 0; i < n; ++i) {
            if (added[i] == 0) continue;
            operators[i].requestedExits += uint32(added[i]);
            emit RequestedValidatorExits(i, operators[i].requestedExits);
        }
        _setTotalValidatorExitsRequested(totalValidatorExitsRequested + count);
        _setCurrentValidatorExitsDemand(currentValidatorExitsDemand - count);
    }

    // ------------------------------------------------------------------ internals

    function _get(uint256 index) internal view returns (Operator storage) {
        if (index >= operators.length) revert OperatorNotFound(index);
        return operators[index];
    }

    function _stopped(uint256 index) internal view returns (uint32) {
        return index + 1 < stoppedValidators.length ? stoppedValidators[index + 1] : 0;
    }

    function _setCurrentValidatorExitsDemand(uint256 newDemand) internal {
        emit SetCurrentValidatorExitsDemand(currentValidatorExitsDemand, newDemand);
        currentValidatorExitsDemand = newDemand;
    }

    function _setTotalValidatorExitsRequested(uint256 newTotal) internal {
        emit SetTotalValidatorExitsRequested(totalValidatorExitsRequested, newTotal);
        totalValidatorExitsRequested = newTotal;
    }
}
