import { parseEther } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Anvil, startAnvil } from '../devnet/anvil.ts'
import { chainFor, createChainClient, createWriteClient } from './client.ts'
import { isTransientRpcError } from './retry.ts'

/** anvil's first default dev key (public, test only) and its address. */
const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const DEV_ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'

let anvil: Anvil

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 31337 })
})

afterAll(async () => {
  await anvil?.stop()
})

describe('createChainClient', () => {
  test('behavior: reads the node over http with batching and viem retries off', async () => {
    const client = createChainClient({ rpcUrl: anvil.rpcUrl, chainId: 31337, timeoutMs: 5_000 })
    expect(await client.getChainId()).toBe(31337)
    expect(client.chain?.id).toBe(31337)
    expect(client.transport.type).toBe('http')
    expect(client.transport.retryCount).toBe(0)
    expect(client.transport.timeout).toBe(5_000)
    expect(client.batch?.multicall).toBeFalsy()
  })

  test('behavior: without a chain id the client still reads', async () => {
    const client = createChainClient({ rpcUrl: anvil.rpcUrl })
    expect(client.chain).toBeUndefined()
    expect(await client.getChainId()).toBe(31337)
  })

  test('behavior: an unreachable node fails at once with a transient error', async () => {
    const client = createChainClient({ rpcUrl: 'http://127.0.0.1:1', timeoutMs: 2_000 })
    const started = performance.now()
    const error = await client.getChainId().catch((e: unknown) => e)
    expect(isTransientRpcError(error)).toBe(true)
    expect(performance.now() - started).toBeLessThan(1_500)
  })
})

describe('chainFor', () => {
  test('behavior: known chains come from viem, others are minimal definitions', () => {
    expect(chainFor(1, 'http://x').name).toBe('Ethereum')
    expect(chainFor(560048, 'http://x').id).toBe(560048)
    expect(chainFor(31337, 'http://127.0.0.1:9').rpcUrls.default.http).toEqual(['http://127.0.0.1:9'])
  })
})

describe('createWriteClient', () => {
  test('behavior: signs locally and sends a raw transaction the node mines', async () => {
    const wallet = createWriteClient({ rpcUrl: anvil.rpcUrl, privateKey: DEV_KEY, chainId: 31337 })
    expect(wallet.account.address).toBe(DEV_ADDRESS)
    expect(wallet.account.type).toBe('local')
    const reader = createChainClient({ rpcUrl: anvil.rpcUrl })
    const to = '0x000000000000000000000000000000000000bEEF'
    const hash = await wallet.sendTransaction({ to, value: parseEther('1') })
    const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    expect(receipt.status).toBe('success')
    expect(receipt.from.toLowerCase()).toBe(DEV_ADDRESS.toLowerCase())
    expect(await reader.getBalance({ address: to })).toBe(parseEther('1'))
  })
})
