// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Shared.sol";

/// @title Allowlist (devnet)
/// @notice Per-account permission bit masks (DEPOSIT = 1, DONATE = 2, REDEEM = 4, DENY = 1 << 255), with the
///         mainnet revert rules of setAllowPermissions / setDenyPermissions.
/// @dev DEVIATION from mainnet: the admin may register several allowers (mainnet has exactly one), so that
///      independent writers (the service and the simulator) each send from their own account and nonce.
contract Allowlist is IAllowlist {
    event SetAllowlistPermissions(address[] accounts, uint256[] permissions);
    event SetAllower(address indexed allower, bool enabled);
    event SetDenier(address indexed denier);
    event SetAdmin(address indexed admin);

    error Unauthorized(address caller);
    error InvalidCount();
    error MismatchedArrayLengths();
    error InvalidZeroAddress();
    error AttemptToSetDenyPermission();
    error AttemptToRemoveDenyPermission();
    error Denied(address account);

    address public admin;
    address public denier;
    mapping(address => bool) public isAllower;
    mapping(address => uint256) internal permissions;

    constructor(address admin_) {
        if (admin_ == address(0)) revert InvalidZeroAddress();
        admin = admin_;
        emit SetAdmin(admin_);
    }

    modifier onlyAdmin() {
        if (msg.sender != admin) revert Unauthorized(msg.sender);
        _;
    }

    /// @notice Registers or unregisters an allower (devnet: several allowers may coexist).
    function setAllower(address allower, bool enabled) external onlyAdmin {
        if (allower == address(0)) revert InvalidZeroAddress();
        isAllower[allower] = enabled;
        emit SetAllower(allower, enabled);
    }

    function setDenier(address newDenier) external onlyAdmin {
        if (newDenier == address(0)) revert InvalidZeroAddress();
        denier = newDenier;
        emit SetDenier(newDenier);
    }

    function getDenier() external view returns (address) {
        return denier;
    }

    /// @notice Sets DEPOSIT / DONATE / REDEEM permissions. Reverts on an empty list, mismatched lengths,
    ///         the zero address, a DENY bit in a new value, or an account that is currently denied.
    function setAllowPermissions(address[] calldata accounts, uint256[] calldata newPermissions) external {
        if (!isAllower[msg.sender]) revert Unauthorized(msg.sender);
        _checkLists(accounts, newPermissions);
        for (uint256 i = 0; i < accounts.length; ++i) {
            if (accounts[i] == address(0)) revert InvalidZeroAddress();
            if (permissions[accounts[i]] & Masks.DENY == Masks.DENY) revert AttemptToRemoveDenyPermission();
            if (newPermissions[i] & Masks.DENY == Masks.DENY) revert AttemptToSetDenyPermission();
            permissions[accounts[i]] = newPermissions[i];
        }
        emit SetAllowlistPermissions(accounts, newPermissions);
    }

    /// @notice Denies (value with the DENY bit: stored as exactly DENY) or undenies (any other value: stored
    ///         as 0) accounts. Only the denier.
    function setDenyPermissions(address[] calldata accounts, uint256[] calldata newPermissions) external {
        if (msg.sender != denier) revert Unauthorized(msg.sender);
        _checkLists(accounts, newPermissions);
        for (uint256 i = 0; i < accounts.length; ++i) {
            if (accounts[i] == address(0)) revert InvalidZeroAddress();
            permissions[accounts[i]] = newPermissions[i] & Masks.DENY == Masks.DENY ? Masks.DENY : 0;
        }
        emit SetAllowlistPermissions(accounts, newPermissions);
    }

    function getPermissions(address account) external view returns (uint256) {
        return permissions[account];
    }

    function isAllowed(address account, uint256 mask) external view returns (bool) {
        uint256 value = permissions[account];
        if (value & Masks.DENY == Masks.DENY) return false;
        return value & mask == mask;
    }

    function isDenied(address account) external view returns (bool) {
        return permissions[account] & Masks.DENY == Masks.DENY;
    }

    function hasPermission(address account, uint256 mask) external view returns (bool) {
        return permissions[account] & mask == mask;
    }

    /// @notice Reverts with Denied or Unauthorized unless the account holds every bit of the mask.
    function onlyAllowed(address account, uint256 mask) external view {
        uint256 value = permissions[account];
        if (value & Masks.DENY == Masks.DENY) revert Denied(account);
        if (value & mask != mask) revert Unauthorized(account);
    }

    function _checkLists(address[] calldata accounts, uint256[] calldata newPermissions) internal pure {
        if (accounts.length == 0) revert InvalidCount();
        if (accounts.length != newPermissions.length) revert MismatchedArrayLengths();
    }
}
