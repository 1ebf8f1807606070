import { createPublicClient, http } from 'viem'
import { describe, expect, test } from 'vitest'
import { startAnvil } from './anvil.ts'

describe('startAnvil', () => {
  test('behavior: spawns a node on a free port that answers JSON-RPC', async () => {
    const anvil = await startAnvil({ timestamp: 1_775_001_600n })
    try {
      const client = createPublicClient({ transport: http(anvil.rpcUrl) })
      expect(await client.getChainId()).toBe(31337)
      const block = await client.getBlock({ blockTag: 'latest' })
      expect(block.timestamp).toBe(1_775_001_600n)
    } finally {
      await anvil.stop()
    }
  })
})
