// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Shared.sol";

/// @title AllowlistFirewall (devnet): the protocol's Firewall in front of the Allowlist
/// @notice Forwards every call it does not declare, calldata and value unchanged, to `destination` when the
///         sender is the admin, or the executor for a selector the admin allowed (`executorCanCall`); anyone
///         else reverts Unauthorized. The Allowlist sees the firewall as the sender, so the firewall is its
///         allower (and admin).
contract AllowlistFirewall is Administrable {
    event SetExecutor(address indexed executor);
    event SetDestination(address indexed destination);
    event SetExecutorPermissions(bytes4 selector, bool executorCanCall);

    error InvalidZeroAddress();

    address public executor;
    address public immutable destination;
    mapping(bytes4 => bool) public executorCanCall;

    constructor(address admin_, address executor_, address destination_, bytes4[] memory executorCallableSelectors) {
        if (admin_ == address(0) || executor_ == address(0) || destination_ == address(0)) {
            revert InvalidZeroAddress();
        }
        admin = admin_;
        executor = executor_;
        destination = destination_;
        emit SetAdmin(admin_);
        emit SetExecutor(executor_);
        emit SetDestination(destination_);
        for (uint256 i = 0; i < executorCallableSelectors.length; ++i) {
            executorCanCall[executorCallableSelectors[i]] = true;
            emit SetExecutorPermissions(executorCallableSelectors[i], true);
        }
    }

    /// @notice Replaces the executor (the admin or the executor itself).
    function setExecutor(address newExecutor) external {
        if (msg.sender != admin && msg.sender != executor) revert Unauthorized(msg.sender);
        if (newExecutor == address(0)) revert InvalidZeroAddress();
        executor = newExecutor;
        emit SetExecutor(newExecutor);
    }

    function allowExecutor(bytes4 selector, bool canCall) external onlyAdmin {
        executorCanCall[selector] = canCall;
        emit SetExecutorPermissions(selector, canCall);
    }

    fallback() external payable {
        _forward();
    }

    receive() external payable {
        _forward();
    }

    function _forward() internal {
        if (msg.sender != admin && !(msg.sender == executor && executorCanCall[msg.sig])) {
            revert Unauthorized(msg.sender);
        }
        address target = destination;
        assembly {
            calldatacopy(0, 0, calldatasize())
            let result := call(gas(), target, callvalue(), 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch result
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }
}
