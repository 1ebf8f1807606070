import { createRequire } from 'node:module'
import type { Hex } from 'viem'

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
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string }
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'Legacy.sol': { content: LEGACY_SOURCE } },
        settings: { outputSelection: { '*': { '*': ['evm.bytecode.object'] } } },
      }),
    ),
  )
  return `0x${output.contracts['Legacy.sol'].LegacyAllowlist.evm.bytecode.object}`
}
