import { createRequire } from 'node:module'
import type { Hex } from 'viem'

/**
 * Creation bytecode of contract `name` in `source` (one file), compiled in process by solc from npm: for the
 * small contracts a test deploys to stand for shapes the devnet does not have (a legacy event, a forwarder).
 *
 * @example
 * const bytecode = compileContract('Forwarder', 'pragma solidity ^0.8.20; contract Forwarder { ... }')
 */
export function compileContract(name: string, source: string): Hex {
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string }
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'Contract.sol': { content: source } },
        settings: { outputSelection: { '*': { '*': ['evm.bytecode.object'] } } },
      }),
    ),
  ) as {
    contracts?: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>
    errors?: unknown[]
  }
  const contract = output.contracts?.['Contract.sol']?.[name]
  if (!contract) throw new Error(`solc did not compile ${name}: ${JSON.stringify(output.errors)}`)
  return `0x${contract.evm.bytecode.object}`
}
