import { type Address, createPublicClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { emitterAbi, type LogEmitterChain, startLogEmitterChain } from '../test/helpers/log-emitter.ts'
import { startRpcProxy } from '../test/helpers/rpc-proxy.ts'
import { getBlockHashes, getHeadBlockNumber, readAllAtBlock, resultOf } from './blocks.ts'
import { createChainClient } from './client.ts'
import { BlockNotFoundError } from './errors.ts'

let chain: LogEmitterChain
let river: Address
let bulkFrom: bigint
let bulkTo: bigint
let totalBlocks: { block: bigint; total: bigint }[]

beforeAll(async () => {
  chain = await startLogEmitterChain({ busyBlocks: 6 })
  ;({ river, bulkFrom, bulkTo, totalBlocks } = chain)
}, 60_000)

afterAll(async () => {
  await chain?.anvil.stop()
})

describe('getBlockHashes', () => {
  test('behavior: returns the node hashes of the asked blocks, with retries over a faulty RPC', async () => {
    const proxy = await startRpcProxy({ upstream: chain.anvil.rpcUrl, seed: 5, faults: { dropRate: 0.3 } })
    try {
      const client = createChainClient({ rpcUrl: proxy.url })
      const direct = createPublicClient({ transport: http(chain.anvil.rpcUrl) })
      const numbers = [bulkFrom, bulkFrom + 1n, bulkTo, bulkFrom]
      const hashes = await getBlockHashes(client, numbers, { retries: 10, baseDelayMs: 1 })
      expect(hashes.size).toBe(3)
      for (const n of numbers) expect(hashes.get(n)).toBe((await direct.getBlock({ blockNumber: n })).hash)
      expect(proxy.stats.dropped).toBeGreaterThan(0)
    } finally {
      await proxy.stop()
    }
  })

  test('behavior: a block past the head raises BlockNotFoundError', async () => {
    const client = createChainClient({ rpcUrl: chain.anvil.rpcUrl })
    const head = await getHeadBlockNumber(client)
    await expect(getBlockHashes(client, [head + 10n])).rejects.toThrow(BlockNotFoundError)
  })
})

describe('readAllAtBlock', () => {
  test('behavior: reads contract state as of a past block, several calls in one eth_call', async () => {
    const proxy = await startRpcProxy({ upstream: chain.anvil.rpcUrl })
    try {
      const client = createChainClient({ rpcUrl: proxy.url })
      for (const { block, total } of [totalBlocks[0]!, totalBlocks[5]!, totalBlocks.at(-1)!]) {
        const readTotal = { address: river, abi: emitterAbi, functionName: 'total' } as const
        const values = await readAllAtBlock(client, [readTotal, readTotal], block)
        expect(values.map(resultOf)).toEqual([total, total])
      }
      expect(proxy.stats.byMethod.eth_call).toBe(3)
    } finally {
      await proxy.stop()
    }
  })

  test('behavior: a revert fails at once, a dropped connection is retried', async () => {
    const proxy = await startRpcProxy({ upstream: chain.anvil.rpcUrl, faults: { dropNext: 2 } })
    try {
      const client = createChainClient({ rpcUrl: proxy.url })
      const [value] = await readAllAtBlock(
        client,
        [{ address: river, abi: emitterAbi, functionName: 'total' }],
        bulkTo,
        { baseDelayMs: 1 },
      )
      expect(resultOf(value)).toBe(totalBlocks.at(-1)!.total)
      expect(proxy.stats.dropped).toBe(2)
      proxy.resetStats()
      const [boom, total] = await readAllAtBlock(
        client,
        [
          { address: river, abi: emitterAbi, functionName: 'boom' },
          { address: river, abi: emitterAbi, functionName: 'total' },
        ],
        bulkTo,
        { baseDelayMs: 1 },
      )
      expect(() => resultOf(boom)).toThrow(/boom/)
      expect(resultOf(total)).toBe(totalBlocks.at(-1)!.total)
      expect(proxy.stats.byMethod.eth_call).toBe(1)
    } finally {
      await proxy.stop()
    }
  })
})
