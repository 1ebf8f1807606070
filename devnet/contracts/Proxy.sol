// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title TransparentProxy (devnet): an EIP-1967 transparent proxy, the shape of the protocol's TUPProxy
/// @notice The implementation sits in slot keccak256("eip1967.proxy.implementation") - 1 and the admin in
///         keccak256("eip1967.proxy.admin") - 1. Calls from the proxy admin reach the proxy's own functions
///         (upgradeTo, upgradeToAndCall, changeAdmin, admin, implementation); every other call is delegated to
///         the implementation, including those selectors (so the admin cannot call the implementation, and
///         nobody else can reach the proxy's functions). Mainnet's pause switch is left out.
contract TransparentProxy {
    event Upgraded(address indexed implementation);
    event AdminChanged(address previousAdmin, address newAdmin);

    error InvalidImplementation(address implementation);
    error InvalidZeroAddress();
    error AdminCannotCallImplementation();

    bytes32 internal constant IMPLEMENTATION_SLOT = 0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc;
    bytes32 internal constant ADMIN_SLOT = 0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103;

    /// @notice Points at `logic`, sets the proxy admin and runs `data` (an initializer) against the implementation.
    constructor(address logic, address admin_, bytes memory data) payable {
        _setAdmin(admin_);
        _upgradeToAndCall(logic, data);
    }

    modifier ifAdmin() {
        if (msg.sender == _admin()) {
            _;
        } else {
            _delegate(_implementation());
        }
    }

    function admin() external ifAdmin returns (address) {
        return _admin();
    }

    function implementation() external ifAdmin returns (address) {
        return _implementation();
    }

    function changeAdmin(address newAdmin) external ifAdmin {
        _setAdmin(newAdmin);
    }

    function upgradeTo(address newImplementation) external ifAdmin {
        _upgradeToAndCall(newImplementation, "");
    }

    /// @notice Upgrades, then delegatecalls `data` (the new version's initializer) in the same transaction.
    function upgradeToAndCall(address newImplementation, bytes calldata data) external payable ifAdmin {
        _upgradeToAndCall(newImplementation, data);
    }

    fallback() external payable {
        _fallback();
    }

    receive() external payable {
        _fallback();
    }

    function _fallback() internal {
        if (msg.sender == _admin()) revert AdminCannotCallImplementation();
        _delegate(_implementation());
    }

    function _admin() internal view returns (address value) {
        bytes32 slot = ADMIN_SLOT;
        assembly {
            value := sload(slot)
        }
    }

    function _implementation() internal view returns (address value) {
        bytes32 slot = IMPLEMENTATION_SLOT;
        assembly {
            value := sload(slot)
        }
    }

    function _setAdmin(address newAdmin) internal {
        if (newAdmin == address(0)) revert InvalidZeroAddress();
        address previous = _admin();
        bytes32 slot = ADMIN_SLOT;
        assembly {
            sstore(slot, newAdmin)
        }
        emit AdminChanged(previous, newAdmin);
    }

    function _upgradeToAndCall(address newImplementation, bytes memory data) internal {
        if (newImplementation.code.length == 0) revert InvalidImplementation(newImplementation);
        bytes32 slot = IMPLEMENTATION_SLOT;
        assembly {
            sstore(slot, newImplementation)
        }
        emit Upgraded(newImplementation);
        if (data.length > 0) {
            (bool success, bytes memory returned) = newImplementation.delegatecall(data);
            if (!success) {
                assembly {
                    revert(add(returned, 32), mload(returned))
                }
            }
        }
    }

    function _delegate(address target) internal {
        assembly {
            calldatacopy(0, 0, calldatasize())
            let result := delegatecall(gas(), target, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch result
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }
}
