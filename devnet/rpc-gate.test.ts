import { createPublicClient, http, toHex } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Anvil, startAnvil } from './anvil.ts'
import { DEVNET_ANVIL_ARGS } from './blocks.ts'
import { changesChain, createReadWriteGate, type RpcGate, startRpcGate } from './rpc-gate.ts'

describe('changesChain', () => {
  test('behavior: mining, reverts and state edits change the chain, in a batch too; reads, sends and bad JSON do not', () => {
    const call = (method: string) => ({ jsonrpc: '2.0', id: 1, method, params: [] })
    for (const method of ['evm_mine', 'anvil_mine', 'evm_revert', 'anvil_setBalance', 'hardhat_mine']) {
      expect(changesChain(JSON.stringify(call(method)))).toBe(true)
    }
    for (const method of ['eth_call', 'eth_getLogs', 'eth_sendTransaction', 'eth_blockNumber']) {
      expect(changesChain(JSON.stringify(call(method)))).toBe(false)
    }
    expect(changesChain(JSON.stringify([call('eth_call'), call('evm_mine')]))).toBe(true)
    expect(changesChain(JSON.stringify([call('eth_call'), call('eth_getBalance')]))).toBe(false)
    expect(changesChain('{not json')).toBe(false)
    expect(changesChain('null')).toBe(false)
  })
})

describe('createReadWriteGate', () => {
  test('behavior: work alone waits for the shared work in flight and holds shared work that arrives meanwhile', async () => {
    const gate = createReadWriteGate()
    const events: string[] = []
    let finishRead = () => {}
    const firstRead = gate.shared(async () => {
      events.push('read 1 start')
      await new Promise<void>((resolve) => {
        finishRead = resolve
      })
      events.push('read 1 end')
    })
    const write = gate.alone(async () => {
      events.push('write')
    })
    const secondRead = gate.shared(async () => {
      events.push('read 2')
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(events).toEqual(['read 1 start'])
    finishRead()
    await Promise.all([firstRead, write, secondRead])
    expect(events).toEqual(['read 1 start', 'read 1 end', 'write', 'read 2'])
  })

  test('behavior: two writers run one after the other; a failed one releases the gate', async () => {
    const gate = createReadWriteGate()
    const events: string[] = []
    const failing = gate.alone(async () => {
      events.push('write 1')
      throw new Error('boom')
    })
    const next = gate.alone(async () => {
      events.push('write 2')
    })
    const read = gate.shared(async () => {
      events.push('read')
    })
    await expect(failing).rejects.toThrow('boom')
    await Promise.all([next, read])
    expect(events).toEqual(['write 1', 'write 2', 'read'])
  })
})

describe('startRpcGate (anvil)', () => {
  let anvil: Anvil
  let gate: RpcGate
  beforeAll(async () => {
    anvil = await startAnvil({ args: DEVNET_ANVIL_ARGS })
    gate = await startRpcGate(anvil.rpcUrl)
  })
  afterAll(async () => {
    await gate?.stop()
    await anvil?.stop()
  })

  test('behavior: a read at the head block while blocks are mined answers that block state, never the next one', async () => {
    // anvil alone, under the same load, answered 74 and 86 of ~2,290 such reads with the next block's balance
    const client = createPublicClient({ transport: http(gate.url) })
    const rpc = (method: string, params: unknown[]) =>
      client.request({ method: method as never, params: params as never })
    const [from] = (await rpc('eth_accounts', [])) as string[]
    const to = '0x00000000000000000000000000000000000b0b00'
    const start = await client.getBlock()
    let timestamp = start.timestamp
    let mining = true
    const wrong: { block: bigint; balance: bigint }[] = []
    let reads = 0
    const reader = async () => {
      while (mining) {
        const head = await client.getBlockNumber({ cacheTime: 0 })
        const balance = await client.getBalance({ address: to, blockNumber: head })
        reads++
        // one wei sent in each block after the start: block n holds n - start wei
        if (balance !== head - start.number) wrong.push({ block: head, balance })
      }
    }
    const readers = Array.from({ length: 4 }, reader)
    for (let i = 0; i < 300; i++) {
      await rpc('eth_sendTransaction', [{ from, to, value: toHex(1n), gas: toHex(21_000n), gasPrice: '0x1' }])
      timestamp += 12n
      await rpc('evm_mine', [{ timestamp: Number(timestamp), blocks: 1 }])
    }
    mining = false
    await Promise.all(readers)
    expect(reads).toBeGreaterThan(300)
    expect(wrong).toEqual([])
  }, 60_000)

  test('behavior: an upstream that is gone answers 502 with a JSON-RPC error', async () => {
    const orphan = await startRpcGate('http://127.0.0.1:1')
    try {
      const answer = await fetch(orphan.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
      })
      expect(answer.status).toBe(502)
      expect(((await answer.json()) as { error: { message: string } }).error.message).toMatch(
        /devnet node unreachable/,
      )
    } finally {
      await orphan.stop()
    }
  })
})
