// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Shared.sol";

/// @title AllowlistBase (devnet): per-account permission bit masks, common to every version
/// @notice DEPOSIT = 1, DONATE = 2, REDEEM = 4, DENY = 1 << 255. One allower (on the devnet as on mainnet: the
///         AllowlistFirewall), one admin, and from 1.2.1 on one denier.
/// @dev Every Allowlist version (AllowlistV0_4, AllowlistV0_5, AllowlistV1_2) inherits this contract and declares
///      no storage of its own, so a proxy upgraded from one version to the next keeps the permissions.
abstract contract AllowlistBase is IAllowlist, Initializable, Administrable {
    event SetAllower(address indexed allower);

    error InvalidZeroAddress();
    error Denied(address account);

    address internal allower;
    address internal denier;
    mapping(address => uint256) internal permissions;

    /// @notice Sets the admin and the allower (initializer version 0).
    function initAllowlistV1(address admin_, address allower_) external init(0) {
        if (admin_ == address(0) || allower_ == address(0)) revert InvalidZeroAddress();
        admin = admin_;
        allower = allower_;
        emit SetAdmin(admin_);
        emit SetAllower(allower_);
    }

    function setAllower(address newAllower) external onlyAdmin {
        if (newAllower == address(0)) revert InvalidZeroAddress();
        allower = newAllower;
        emit SetAllower(newAllower);
    }

    function getAllower() external view returns (address) {
        return allower;
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
}

/// @notice The 0.4 / 0.5 write: `allow(accounts, permissions)` by the allower or the admin stores each value as
///         given, the DENY bit included (so the allower both denies and lifts denials).
abstract contract AllowlistV0 is AllowlistBase {
    error InvalidAlloweeCount();
    error MismatchedAlloweeAndStatusCount();

    function allow(address[] calldata accounts, uint256[] calldata newPermissions) external {
        if (msg.sender != allower && msg.sender != admin) revert Unauthorized(msg.sender);
        if (accounts.length == 0) revert InvalidAlloweeCount();
        if (accounts.length != newPermissions.length) revert MismatchedAlloweeAndStatusCount();
        for (uint256 i = 0; i < accounts.length; ++i) {
            if (accounts[i] == address(0)) revert InvalidZeroAddress();
            permissions[accounts[i]] = newPermissions[i];
        }
        _emitPermissions(accounts, newPermissions);
    }

    function _emitPermissions(address[] calldata accounts, uint256[] calldata newPermissions) internal virtual;
}

/// @title Allowlist 0.4.0 shape (devnet): `allow`, and SetAllowlistPermissions with `accounts` indexed (its topic
///        is the hash of the array: the log alone does not name the accounts)
contract AllowlistV0_4 is AllowlistV0 {
    event SetAllowlistPermissions(address[] indexed accounts, uint256[] permissions);

    function _emitPermissions(address[] calldata accounts, uint256[] calldata newPermissions) internal override {
        emit SetAllowlistPermissions(accounts, newPermissions);
    }
}

/// @title Allowlist 0.5.0 shape (devnet): `allow`, and SetAllowlistPermissions without indexed fields
contract AllowlistV0_5 is AllowlistV0 {
    event SetAllowlistPermissions(address[] accounts, uint256[] permissions);

    function _emitPermissions(address[] calldata accounts, uint256[] calldata newPermissions) internal override {
        emit SetAllowlistPermissions(accounts, newPermissions);
    }
}

/// @title Allowlist 1.2.1 shape (devnet): setAllowPermissions (the allower) and setDenyPermissions (the denier)
/// @notice setAllowPermissions reverts on an empty list, mismatched lengths, the zero address, a DENY bit in a
///         new value, or an account that is currently denied. setDenyPermissions stores exactly DENY for a value
///         with the DENY bit and 0 otherwise, so a denial can be lifted. Both emit the values as passed.
contract AllowlistV1_2 is AllowlistBase {
    event SetAllowlistPermissions(address[] accounts, uint256[] permissions);
    event SetDenier(address indexed denier);

    error InvalidCount();
    error MismatchedArrayLengths();
    error AttemptToSetDenyPermission();
    error AttemptToRemoveDenyPermission();

    /// @notice The 1.2.1 upgrade's initializer (version 1): sets the denier.
    function initAllowlistV1_1(address denier_) external init(1) {
        if (denier_ == address(0)) revert InvalidZeroAddress();
        denier = denier_;
        emit SetDenier(denier_);
    }

    function setDenier(address newDenier) external onlyAdmin {
        if (newDenier == address(0)) revert InvalidZeroAddress();
        denier = newDenier;
        emit SetDenier(newDenier);
    }

    function getDenier() external view returns (address) {
        return denier;
    }

    function setAllowPermissions(address[] calldata accounts, uint256[] calldata newPermissions) external {
        if (msg.sender != allower) revert Unauthorized(msg.sender);
        _checkLists(accounts, newPermissions);
        for (uint256 i = 0; i < accounts.length; ++i) {
            if (accounts[i] == address(0)) revert InvalidZeroAddress();
            if (permissions[accounts[i]] & Masks.DENY == Masks.DENY) revert AttemptToRemoveDenyPermission();
            if (newPermissions[i] & Masks.DENY == Masks.DENY) revert AttemptToSetDenyPermission();
            permissions[accounts[i]] = newPermissions[i];
        }
        emit SetAllowlistPermissions(accounts, newPermissions);
    }

    function setDenyPermissions(address[] calldata accounts, uint256[] calldata newPermissions) external {
        if (msg.sender != denier) revert Unauthorized(msg.sender);
        _checkLists(accounts, newPermissions);
        for (uint256 i = 0; i < accounts.length; ++i) {
            if (accounts[i] == address(0)) revert InvalidZeroAddress();
            permissions[accounts[i]] = newPermissions[i] & Masks.DENY == Masks.DENY ? Masks.DENY : 0;
        }
        emit SetAllowlistPermissions(accounts, newPermissions);
    }

    function version() external pure returns (string memory) {
        return "1.2.1";
    }

    function _checkLists(address[] calldata accounts, uint256[] calldata newPermissions) internal pure {
        if (accounts.length == 0) revert InvalidCount();
        if (accounts.length != newPermissions.length) revert MismatchedArrayLengths();
    }
}
