import { type AbiFunction, encodeFunctionData, toFunctionSignature } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { aggregatorV3Abi } from '../chain/price-feeds.ts'
import { devnetPriceFeedAbi } from './abi.ts'
import { DevnetTxError } from './blocks.ts'
import { loadArtifacts } from './compile.ts'
import { startTestChain, type TestChain } from './testing.ts'

/**
 * The devnet's PriceFeed is not a protocol contract (test/abi-fixtures.test.ts lists it among the artifacts
 * without a real counterpart): it is Chainlink-shaped, so its ABI is checked here against the AggregatorV3
 * subset the service reads (chain/price-feeds.ts) and the devnet's own calls (devnet/abi.ts).
 */
describe('PriceFeed (devnet)', () => {
  const artifact = loadArtifacts().contracts.PriceFeed
  const functions = artifact.abi.filter((i): i is AbiFunction => i.type === 'function')
  const find = (name: string) => functions.find((f) => f.name === name)

  test('behavior: declares every AggregatorV3 read of chain/price-feeds.ts with the same signature, outputs and view mutability', () => {
    for (const item of aggregatorV3Abi) {
      const declared = find(item.name)
      expect(declared, item.name).toBeDefined()
      expect(toFunctionSignature(declared!)).toBe(toFunctionSignature(item))
      expect(declared!.outputs.map((o) => o.type)).toEqual(item.outputs.map((o) => o.type))
      expect(declared!.stateMutability).toBe('view')
    }
  })

  test("behavior: declares the devnet's own calls (devnet/abi.ts devnetPriceFeedAbi) with the same signatures", () => {
    for (const item of devnetPriceFeedAbi) {
      if (item.type !== 'function') continue
      const declared = find(item.name)
      expect(declared, item.name).toBeDefined()
      expect(toFunctionSignature(declared!)).toBe(toFunctionSignature(item))
      expect(declared!.outputs.map((o) => o.type)).toEqual(item.outputs.map((o) => o.type))
    }
  })

  describe('on anvil', () => {
    let chain: TestChain
    beforeAll(async () => {
      chain = await startTestChain()
    }, 60_000)
    afterAll(async () => {
      await chain?.stop()
    })
    const update = (from: `0x${string}`, answer: bigint) => ({
      from,
      to: chain.deployment.contracts.usdPriceFeed,
      data: encodeFunctionData({ abi: devnetPriceFeedAbi, functionName: 'updateAnswer', args: [answer] }),
      gas: 300_000n,
      label: `updateAnswer ${answer}`,
    })
    const read = <T>(functionName: 'latestRoundData' | 'decimals' | 'description', blockNumber?: bigint) =>
      chain.publicClient.readContract({
        address: chain.deployment.contracts.usdPriceFeed,
        abi: aggregatorV3Abi,
        functionName,
        ...(blockNumber === undefined ? {} : { blockNumber }),
      }) as Promise<T>

    test('behavior: deployed with 8 decimals and its pair, no round until the owner sets one; rounds count up with the block time', async () => {
      expect(await read<number>('decimals')).toBe(8)
      expect(await read<string>('description')).toBe('ETH / USD')
      await expect(read('latestRoundData')).rejects.toThrow(/No data present/)
      const first = await chain.mine([update(chain.deployment.roles.admin, 300_000_000_000n)])
      const second = await chain.mine([update(chain.deployment.roles.admin, 301_000_000_000n)])
      expect(await read('latestRoundData', first.number)).toEqual([
        1n,
        300_000_000_000n,
        first.timestamp,
        first.timestamp,
        1n,
      ])
      expect(await read('latestRoundData', second.number)).toEqual([
        2n,
        301_000_000_000n,
        second.timestamp,
        second.timestamp,
        2n,
      ])
    })

    test("behavior: the second feed is EUR / USD with 8 decimals, as Chainlink's on mainnet (no ETH / EUR feed: it is derived)", async () => {
      const eurUsd = (functionName: 'decimals' | 'description') =>
        chain.publicClient.readContract({
          address: chain.deployment.contracts.eurPriceFeed,
          abi: aggregatorV3Abi,
          functionName,
        })
      expect(await eurUsd('description')).toBe('EUR / USD')
      expect(await eurUsd('decimals')).toBe(8)
    })

    test('behavior: only the owner (the admin) sets answers', async () => {
      await expect(chain.mine([update(chain.deployment.roles.keeper, 1n)])).rejects.toThrow(DevnetTxError)
      await expect(chain.mine([update(chain.deployment.roles.keeper, 1n)])).rejects.toThrow(/Unauthorized/)
    })
  })
})
