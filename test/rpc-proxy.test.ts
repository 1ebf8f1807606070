import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Anvil, startAnvil } from '../devnet/anvil.ts'
import { createRng } from '../devnet/rng.ts'
import { createRpcProxy, type RpcProxy, startRpcProxy } from './helpers/rpc-proxy.ts'

let anvil: Anvil

beforeAll(async () => {
  anvil = await startAnvil({})
  await post(anvil.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x64'] })
})

afterAll(async () => {
  await anvil?.stop()
})

async function post(url: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = text
  }
  return { status: response.status, json }
}

const call = (method: string, params: unknown[] = [], id = 1) => ({ jsonrpc: '2.0', id, method, params })

async function withProxy(
  options: Parameters<typeof startRpcProxy>[0],
  fn: (proxy: RpcProxy) => Promise<void>,
) {
  const proxy = await startRpcProxy(options)
  try {
    await fn(proxy)
  } finally {
    await proxy.stop()
  }
}

describe('rpc proxy', () => {
  test('behavior: forwards calls and batches to the node and counts them', async () => {
    await withProxy({ upstream: anvil.rpcUrl }, async (proxy) => {
      expect(proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const single = await post(proxy.url, call('eth_chainId'))
      expect(single).toEqual({ status: 200, json: { jsonrpc: '2.0', id: 1, result: '0x7a69' } })
      const batch = await post(proxy.url, [call('eth_chainId', [], 1), call('eth_blockNumber', [], 2)])
      expect(batch.json).toEqual([
        { jsonrpc: '2.0', id: 1, result: '0x7a69' },
        { jsonrpc: '2.0', id: 2, result: '0x64' },
      ])
      expect(proxy.stats).toMatchObject({
        requests: 2,
        calls: 3,
        forwarded: 3,
        byMethod: { eth_chainId: 2, eth_blockNumber: 1 },
      })
    })
  })

  test('behavior: drops the next N connections, then answers again', async () => {
    await withProxy({ upstream: anvil.rpcUrl, faults: { dropNext: 2 } }, async (proxy) => {
      await expect(post(proxy.url, call('eth_chainId'))).rejects.toThrow()
      await expect(post(proxy.url, call('eth_chainId'))).rejects.toThrow()
      expect((await post(proxy.url, call('eth_chainId'))).status).toBe(200)
      expect(proxy.stats).toMatchObject({ dropped: 2, forwarded: 1 })
    })
  })

  test('behavior: answers HTTP 500 and 429 as configured, only for the chosen methods', async () => {
    await withProxy(
      {
        upstream: anvil.rpcUrl,
        faults: { httpErrorNext: 1, httpErrorStatus: 429, methods: ['eth_getLogs'] },
      },
      async (proxy) => {
        expect((await post(proxy.url, call('eth_chainId'))).status).toBe(200)
        expect(
          (await post(proxy.url, call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }]))).status,
        ).toBe(429)
        proxy.updateFaults({ httpErrorRate: 1, httpErrorStatus: 500 })
        expect(
          (await post(proxy.url, call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }]))).status,
        ).toBe(500)
        expect(proxy.stats.httpErrors).toBe(2)
      },
    )
  })

  test('behavior: answers -32005 for eth_getLogs wider than the configured range, resolving block tags', async () => {
    await withProxy({ upstream: anvil.rpcUrl, faults: { maxLogsRange: 50 } }, async (proxy) => {
      const ok = await post(proxy.url, call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x32' }]))
      expect(ok.json).toEqual({ jsonrpc: '2.0', id: 1, result: [] })
      const wide = await post(proxy.url, call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x33' }]))
      expect(wide.json).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32005, message: 'query returned more than 10000 results' },
      })
      const tagged = await post(
        proxy.url,
        call('eth_getLogs', [{ fromBlock: 'earliest', toBlock: 'latest' }]),
      )
      expect(tagged.json).toMatchObject({ error: { code: -32005 } })
      expect(proxy.stats.rangeErrors).toBe(2)
    })
  })

  test('behavior: lost answers reach the node but not the client', async () => {
    await withProxy({ upstream: anvil.rpcUrl, faults: { dropResponseNext: 1 } }, async (proxy) => {
      await expect(post(proxy.url, call('evm_mine'))).rejects.toThrow()
      const head = await post(anvil.rpcUrl, call('eth_blockNumber'))
      expect(head.json).toMatchObject({ result: '0x65' })
      expect(proxy.stats.droppedResponses).toBe(1)
    })
  })

  test('behavior: adds latency', async () => {
    await withProxy({ upstream: anvil.rpcUrl, faults: { latencyMs: 120 } }, async (proxy) => {
      const started = performance.now()
      await post(proxy.url, call('eth_chainId'))
      expect(performance.now() - started).toBeGreaterThanOrEqual(100)
      expect(proxy.stats.delayed).toBe(1)
    })
  })

  test('behavior: random faults follow the seed', async () => {
    const pattern = async (seed: number) => {
      const outcomes: string[] = []
      await withProxy(
        { upstream: anvil.rpcUrl, seed, faults: { dropRate: 0.3, httpErrorRate: 0.2 } },
        async (proxy) => {
          for (let i = 0; i < 30; i++) {
            const outcome = await post(proxy.url, call('eth_chainId')).then(
              (r) => String(r.status),
              () => 'drop',
            )
            outcomes.push(outcome)
          }
        },
      )
      return outcomes
    }
    const a = await pattern(7)
    expect(await pattern(7)).toEqual(a)
    expect(await pattern(8)).not.toEqual(a)
    expect(a).toContain('drop')
    expect(a).toContain('500')
    expect(a).toContain('200')
    expect(createRng(1).next()).toBe(createRng(1).next())
  })

  test('behavior: refuses a non-loopback upstream', () => {
    expect(() => createRpcProxy({ upstream: 'http://10.0.0.1:8545' })).toThrow(/loopback/)
    expect(() => createRpcProxy({ upstream: 'https://mainnet.example.org' })).toThrow(/loopback/)
  })
})
