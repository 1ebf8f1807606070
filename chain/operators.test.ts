import { type Address, createPublicClient, createWalletClient, type Hex, http } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Anvil, startAnvil } from '../devnet/anvil.ts'
import { compileContract } from '../test/helpers/solidity.ts'
import { createChainClient } from './client.ts'
import { readOperatorsAt } from './operators.ts'

/** Registries of the two layouts: 0.4.0's OperatorsV1 (stopped kept in the registry) and 1.x's OperatorsV2. */
const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract LegacyRegistry {
  struct Operator { bool active; string name; address operator; uint256 limit; uint256 funded; uint256 keys;
    uint256 stopped; uint256 latestKeysEditBlockNumber; }
  function getOperatorCount() external pure returns (uint256) { return 2; }
  function getOperator(uint256 i) external pure returns (Operator memory) {
    return Operator(true, "legacy", address(1), 100, 10 + i, 100, 3, 1);
  }
}
contract CurrentRegistry {
  struct Operator { uint32 limit; uint32 funded; uint32 requestedExits; uint32 keys;
    uint64 latestKeysEditBlockNumber; bool active; string name; address operator; }
  function getOperatorCount() external pure returns (uint256) { return 2; }
  function getOperator(uint256 i) external pure returns (Operator memory) {
    return Operator(100, uint32(7 + i), 0, 100, 1, true, "current", address(2));
  }
}`

describe('readOperatorsAt', () => {
  let anvil: Anvil
  const deployed: Record<'LegacyRegistry' | 'CurrentRegistry', Address> = {} as never

  beforeAll(async () => {
    anvil = await startAnvil()
    const transport = http(anvil.rpcUrl)
    const publicClient = createPublicClient({ transport })
    const wallet = createWalletClient({ transport, account: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' })
    for (const name of ['LegacyRegistry', 'CurrentRegistry'] as const) {
      const hash = await wallet.sendTransaction({ chain: null, data: compileContract(name, SOURCE) as Hex })
      deployed[name] = (await publicClient.waitForTransactionReceipt({ hash })).contractAddress as Address
    }
  }, 60_000)
  afterAll(async () => {
    await anvil?.stop()
  })

  const read = async (registry: Address, shape: 'v1' | 'legacy') => {
    const client = createChainClient({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId })
    return readOperatorsAt(client, registry, 2, await client.getBlockNumber(), shape)
  }

  test('behavior: the 0.4.0 layout counts funded - stopped; the 1.x layout counts funded', async () => {
    expect(await read(deployed.LegacyRegistry, 'legacy')).toEqual({
      ok: true,
      operators: [
        { operator_index: 0, funded: 7 },
        { operator_index: 1, funded: 8 },
      ],
    })
    expect(await read(deployed.CurrentRegistry, 'v1')).toEqual({
      ok: true,
      operators: [
        { operator_index: 0, funded: 7 },
        { operator_index: 1, funded: 8 },
      ],
    })
  })

  test('behavior: a registry upgraded apart from River is read in the other layout; one that decodes in neither is not ok', async () => {
    expect((await read(deployed.CurrentRegistry, 'legacy')).ok).toBe(true)
    expect((await read(deployed.LegacyRegistry, 'v1')).ok).toBe(true)
    const none = await read('0x000000000000000000000000000000000000dEaD', 'v1')
    expect(none.ok).toBe(false)
  })
})
