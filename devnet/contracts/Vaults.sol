// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Shared.sol";

/// @title ELFeeRecipient (devnet)
/// @notice Receives execution-layer fees (the simulator credits its balance directly, as block rewards are
///         credited on mainnet); River pulls them at each report.
contract ELFeeRecipient is IELFeeRecipient {
    error Unauthorized(address caller);

    address public immutable river;

    constructor(address river_) {
        river = river_;
    }

    receive() external payable {}

    function pullELFees(uint256 max) external {
        if (msg.sender != river) revert Unauthorized(msg.sender);
        uint256 amount = address(this).balance < max ? address(this).balance : max;
        if (amount > 0) IRiver(river).sendELFees{value: amount}();
    }
}

/// @title Withdraw (devnet): the protocol's withdrawal credentials
/// @notice Consensus-layer skims and exits land here (the simulator credits its balance directly, as
///         withdrawals are credited on mainnet); River pulls the amounts the oracle reported.
contract Withdraw is IWithdraw {
    error Unauthorized(address caller);
    error InsufficientBalance(uint256 requested, uint256 available);

    address public immutable river;

    constructor(address river_) {
        river = river_;
    }

    receive() external payable {}

    function pullEth(uint256 amount) external {
        if (msg.sender != river) revert Unauthorized(msg.sender);
        if (amount > address(this).balance) revert InsufficientBalance(amount, address(this).balance);
        if (amount > 0) IRiver(river).sendCLFunds{value: amount}();
    }
}

/// @title DepositContract (devnet)
/// @notice Stands in for the beacon deposit contract: the ETH sent for new validators stays locked here, as it
///         leaves the execution layer on mainnet.
contract DepositContract is IDepositContract {
    event DepositEvent(address indexed depositor, uint256 validatorCount, uint256 amount);

    function deposit(uint256 validatorCount) external payable {
        emit DepositEvent(msg.sender, validatorCount, msg.value);
    }
}
