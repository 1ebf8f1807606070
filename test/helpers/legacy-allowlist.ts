import type { Hex } from 'viem'
import { compileContract } from './solidity.ts'

/**
 * The first mainnet Allowlist's (0.4.0) write and event shapes: `allow(address[],uint256[])` (selector 0xe580d994)
 * emitting `SetAllowlistPermissions` with `accounts` indexed (a real contract, compiled and run, is the only way
 * to get the topic Solidity emits for an indexed dynamic array), plus a forwarding call whose calldata does not
 * hold the accounts directly (as through an unknown wrapper contract).
 */
const LEGACY_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract LegacyAllowlist {
  event SetAllowlistPermissions(address[] indexed accounts, uint256[] permissions);
  function allow(address[] calldata accounts, uint256[] calldata permissions) public {
    emit SetAllowlistPermissions(accounts, permissions);
  }
  function execute(bytes calldata call) external {
    (address[] memory accounts, uint256[] memory permissions) = abi.decode(call[4:], (address[], uint256[]));
    emit SetAllowlistPermissions(accounts, permissions);
  }
}`

/** Creation bytecode of the legacy Allowlist test contract (solc from npm, in process). */
export function compileLegacyAllowlist(): Hex {
  return compileContract('LegacyAllowlist', LEGACY_SOURCE)
}
