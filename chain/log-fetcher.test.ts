import type { Address, Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  emittedAbi as bothAbi,
  type ExpectedLog,
  logKey as keyOf,
  type LogEmitterChain,
  startLogEmitterChain,
} from '../test/helpers/log-emitter.ts'
import { startRpcProxy } from '../test/helpers/rpc-proxy.ts'
import { allowlistAbi, riverAbi } from './abi.ts'
import { createChainClient } from './client.ts'
import { BlockNotFoundError, ChainRpcError, LogDecodeError, LogRangeError } from './errors.ts'
import type { DecodedLog } from './log-decoding.ts'
import { createLogFetcher, type LogChunk } from './log-fetcher.ts'

let chain: LogEmitterChain
let river: Address
let allowlist: Address
let bulkFrom: bigint
let bulkTo: bigint
let expected: ExpectedLog[]

function comparable(log: DecodedLog) {
  return {
    key: keyOf(log),
    address: log.address,
    blockNumber: log.blockNumber,
    blockHash: log.blockHash,
    transactionHash: log.transactionHash,
    transactionIndex: log.transactionIndex,
    logIndex: log.logIndex,
    eventName: log.eventName,
    args: log.args,
  }
}

function expectExactly(logs: DecodedLog[], want: ExpectedLog[]) {
  expect(new Set(logs.map(keyOf)).size).toBe(logs.length) // each once
  expect(logs.map(comparable)).toEqual(want) // same set, same order, same decoding
}

function expectContiguous(chunks: LogChunk[], from: bigint, to: bigint) {
  expect(chunks[0]?.fromBlock).toBe(from)
  expect(chunks.at(-1)?.toBlock).toBe(to)
  for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.fromBlock).toBe(chunks[i - 1]!.toBlock + 1n)
}

beforeAll(async () => {
  chain = await startLogEmitterChain()
  ;({ river, allowlist, bulkFrom, bulkTo, expected } = chain)
}, 60_000)

afterAll(async () => {
  await chain?.anvil.stop()
})

describe('createLogFetcher', () => {
  test('behavior: returns exactly the emitted events, in order, each once, decoded', async () => {
    const fetcher = createLogFetcher({ client: createChainClient({ rpcUrl: chain.anvil.rpcUrl }) })
    const logs = await fetcher.fetchLogs({
      address: [river, allowlist],
      abi: bothAbi,
      fromBlock: bulkFrom,
      toBlock: bulkTo,
    })
    expectExactly(logs, expected)
    const first = logs[0]!
    if (first.eventName !== 'Transfer') throw new Error(`expected a Transfer first, got ${first.eventName}`)
    expect(first.args).toEqual({
      from: '0x0000000000000000000000000000000000000001',
      to: '0x0000000000000000000000000000000000000002',
      value: 10n ** 18n + 1n,
    })
    const permissions = logs.find((l) => l.eventName === 'SetAllowlistPermissions')
    expect(permissions?.args).toEqual({
      accounts: [
        '0x0000000000000000000000000000000000001001',
        '0x0000000000000000000000000000000000001002',
        '0x0000000000000000000000000000000000001003',
      ],
      permissions: [5n, 1n, 1n << 255n],
    })
  })

  test('behavior: small chunks and one address at a time give the same logs with no gap at boundaries', async () => {
    const fetcher = createLogFetcher({
      client: createChainClient({ rpcUrl: chain.anvil.rpcUrl }),
      initialRange: 7n,
      maxRange: 7n,
    })
    const chunks: LogChunk[] = []
    const logs = await fetcher.fetchLogs({
      address: river,
      abi: riverAbi,
      fromBlock: bulkFrom,
      toBlock: bulkTo,
      onChunk: (chunk) => {
        chunks.push(chunk)
      },
    })
    expectExactly(
      logs,
      expected.filter((e) => e.address === river.toLowerCase()),
    )
    expectContiguous(chunks, bulkFrom, bulkTo)
    expect(chunks.every((c) => c.toBlock - c.fromBlock + 1n <= 7n)).toBe(true)
  })

  test('behavior: shrinks the range when the node refuses wide ranges and still returns the same set', async () => {
    const proxy = await startRpcProxy({ upstream: chain.anvil.rpcUrl, faults: { maxLogsRange: 50 } })
    try {
      const fetcher = createLogFetcher({
        client: createChainClient({ rpcUrl: proxy.url }),
        initialRange: 2000n,
      })
      const chunks: LogChunk[] = []
      for await (const chunk of fetcher.iterateLogs({
        address: [river, allowlist],
        abi: bothAbi,
        fromBlock: bulkFrom,
        toBlock: bulkTo,
      })) {
        chunks.push(chunk)
      }
      expectExactly(
        chunks.flatMap((c) => c.logs),
        expected,
      )
      expectContiguous(chunks, bulkFrom, bulkTo)
      expect(chunks.every((c) => c.toBlock - c.fromBlock + 1n <= 50n)).toBe(true)
      expect(proxy.stats.rangeErrors).toBeGreaterThan(0)
      expect(fetcher.range).toBeLessThanOrEqual(50n)
    } finally {
      await proxy.stop()
    }
  })

  test('behavior: shrinks on too many results (a per-response log cap) down to single busy blocks', async () => {
    const proxy = await startRpcProxy({ upstream: chain.anvil.rpcUrl, faults: { maxLogsResults: 300 } })
    try {
      const fetcher = createLogFetcher({
        client: createChainClient({ rpcUrl: proxy.url }),
        initialRange: 1000n,
      })
      const logs = await fetcher.fetchLogs({
        address: [river, allowlist],
        abi: bothAbi,
        fromBlock: bulkFrom,
        toBlock: bulkTo,
      })
      expectExactly(logs, expected)
      expect(proxy.stats.rangeErrors).toBeGreaterThan(0)
    } finally {
      await proxy.stop()
    }
  })

  test('behavior: with ~20% dropped connections, HTTP 500s and lost answers nothing is lost or duplicated', async () => {
    const proxy = await startRpcProxy({
      upstream: chain.anvil.rpcUrl,
      seed: 5,
      faults: {
        dropRate: 0.2,
        httpErrorRate: 0.1,
        httpErrorStatus: 500,
        dropResponseRate: 0.05,
        maxLogsRange: 120,
      },
    })
    try {
      const fetcher = createLogFetcher({
        client: createChainClient({ rpcUrl: proxy.url }),
        initialRange: 64n,
        retries: 12,
        baseDelayMs: 1,
        maxDelayMs: 20,
      })
      const chunks: LogChunk[] = []
      const logs = await fetcher.fetchLogs({
        address: [river, allowlist],
        abi: bothAbi,
        fromBlock: bulkFrom,
        toBlock: bulkTo,
        onChunk: (c) => {
          chunks.push(c)
        },
      })
      expectExactly(logs, expected)
      expectContiguous(chunks, bulkFrom, bulkTo)
      expect(proxy.stats.dropped).toBeGreaterThan(0)
      expect(proxy.stats.httpErrors).toBeGreaterThan(0)
    } finally {
      await proxy.stop()
    }
  })

  test('behavior: HTTP 429 answers are retried with backoff', async () => {
    const proxy = await startRpcProxy({
      upstream: chain.anvil.rpcUrl,
      faults: { httpErrorNext: 3, httpErrorStatus: 429, methods: ['eth_getLogs'] },
    })
    try {
      const fetcher = createLogFetcher({ client: createChainClient({ rpcUrl: proxy.url }), baseDelayMs: 1 })
      const logs = await fetcher.fetchLogs({
        address: allowlist,
        abi: allowlistAbi,
        fromBlock: bulkFrom,
        toBlock: bulkTo,
      })
      expect(logs.length).toBe(expected.filter((e) => e.eventName === 'SetAllowlistPermissions').length)
      expect(proxy.stats.httpErrors).toBe(3)
      expect(proxy.stats.byMethod.eth_getLogs).toBe(4)
    } finally {
      await proxy.stop()
    }
  })

  test('behavior: a timeout halves the range and the result is unchanged', async () => {
    const proxy = await startRpcProxy({
      upstream: chain.anvil.rpcUrl,
      faults: {
        methods: ['eth_getLogs'],
        latencyMs: (call) => {
          const filter = (call.params as { fromBlock: Hex; toBlock: Hex }[])[0]!
          return BigInt(filter.toBlock) - BigInt(filter.fromBlock) + 1n > 100n ? 1_000 : 0
        },
      },
    })
    try {
      const fetcher = createLogFetcher({
        client: createChainClient({ rpcUrl: proxy.url, timeoutMs: 150 }),
        initialRange: 800n,
        baseDelayMs: 1,
      })
      const logs = await fetcher.fetchLogs({
        address: [river, allowlist],
        abi: bothAbi,
        fromBlock: bulkFrom,
        toBlock: bulkTo,
      })
      expectExactly(logs, expected)
      expect(proxy.stats.delayed).toBeGreaterThan(0)
      expect(fetcher.range).toBeLessThanOrEqual(100n)
    } finally {
      await proxy.stop()
    }
  })

  test('behavior: a permanent error (invalid address) fails at once without retries', async () => {
    const proxy = await startRpcProxy({ upstream: chain.anvil.rpcUrl })
    try {
      const fetcher = createLogFetcher({ client: createChainClient({ rpcUrl: proxy.url }), baseDelayMs: 1 })
      const started = performance.now()
      const error = await fetcher
        .fetchLogs({ address: '0x1234' as Address, abi: riverAbi, fromBlock: bulkFrom, toBlock: bulkTo })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ChainRpcError)
      expect((error as Error).message).toMatch(/eth_getLogs failed for blocks/)
      expect(proxy.stats.byMethod.eth_getLogs).toBe(1)
      expect(performance.now() - started).toBeLessThan(2_000)
    } finally {
      await proxy.stop()
    }
  })

  test('behavior: a transient error that outlives its retries fails with the range in the message', async () => {
    const proxy = await startRpcProxy({
      upstream: chain.anvil.rpcUrl,
      faults: { httpErrorRate: 1, httpErrorStatus: 503, methods: ['eth_getLogs'] },
    })
    try {
      const fetcher = createLogFetcher({
        client: createChainClient({ rpcUrl: proxy.url }),
        retries: 2,
        baseDelayMs: 1,
      })
      const error = await fetcher
        .fetchLogs({ address: river, abi: riverAbi, fromBlock: bulkFrom, toBlock: bulkFrom + 10n })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ChainRpcError)
      expect((error as Error).message).toContain(`blocks ${bulkFrom}..${bulkFrom + 10n} after 2 retries`)
      expect(proxy.stats.byMethod.eth_getLogs).toBe(3)
    } finally {
      await proxy.stop()
    }
  })

  test('behavior: a range refused even at the smallest size raises LogRangeError', async () => {
    const proxy = await startRpcProxy({ upstream: chain.anvil.rpcUrl, faults: { maxLogsResults: 100 } })
    try {
      const fetcher = createLogFetcher({
        client: createChainClient({ rpcUrl: proxy.url }),
        initialRange: 16n,
      })
      const busy = chain.totalBlocks[0]!.block
      const error = await fetcher
        .fetchLogs({ address: river, abi: riverAbi, fromBlock: busy, toBlock: busy + 20n })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(LogRangeError)
      expect((error as Error).message).toContain(`blocks ${busy}..${busy}`)
    } finally {
      await proxy.stop()
    }
  })

  test('behavior: a range past the head is refused before any eth_getLogs', async () => {
    const fetcher = createLogFetcher({ client: createChainClient({ rpcUrl: chain.anvil.rpcUrl }) })
    await expect(
      fetcher.fetchLogs({ address: river, abi: riverAbi, fromBlock: 1n, toBlock: chain.quietTo + 5n }),
    ).rejects.toThrow(BlockNotFoundError)
  })

  test('behavior: the range grows while blocks are quiet, up to maxRange', async () => {
    const fetcher = createLogFetcher({
      client: createChainClient({ rpcUrl: chain.anvil.rpcUrl }),
      initialRange: 2n,
      maxRange: 128n,
    })
    const sizes: bigint[] = []
    const logs = await fetcher.fetchLogs({
      address: [river, allowlist],
      abi: bothAbi,
      fromBlock: chain.quietFrom,
      toBlock: chain.quietTo,
      onChunk: (c) => {
        sizes.push(c.toBlock - c.fromBlock + 1n)
      },
    })
    expect(logs).toEqual([])
    expect(sizes.slice(0, 7)).toEqual([2n, 4n, 8n, 16n, 32n, 64n, 128n])
    expect(sizes.length).toBeGreaterThan(8)
    expect(sizes.slice(7, -1).every((s) => s === 128n)).toBe(true)
    expect(fetcher.range).toBe(128n)
  })

  test('behavior: a malformed log on chain fails the fetch with LogDecodeError naming block, tx and log index', async () => {
    const fetcher = createLogFetcher({ client: createChainClient({ rpcUrl: chain.anvil.rpcUrl }) })
    const error = await fetcher
      .fetchLogs({
        address: river,
        abi: riverAbi,
        fromBlock: chain.malformedBlock,
        toBlock: chain.malformedBlock,
      })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LogDecodeError)
    expect((error as Error).message).toContain(`block ${chain.malformedBlock}`)
    expect((error as Error).message).toContain(chain.malformedTx)
    expect((error as Error).message).toContain('log index 0')
    expect((error as LogDecodeError).eventName).toBe('Transfer')
  })

  test('behavior: a legacy indexed SetAllowlistPermissions comes back flagged with its permissions', async () => {
    const fetcher = createLogFetcher({ client: createChainClient({ rpcUrl: chain.anvil.rpcUrl }) })
    const [log, ...rest] = await fetcher.fetchLogs({
      address: allowlist,
      abi: allowlistAbi,
      fromBlock: chain.legacyBlock,
      toBlock: chain.legacyBlock,
    })
    expect(rest).toEqual([])
    expect(log?.legacyIndexed).toBe(true)
    if (!log?.legacyIndexed) throw new Error('expected a legacy log')
    expect(log.args.permissions).toEqual([5n])
    expect(log.args.accountsHash).toMatch(/^0x[0-9a-f]{64}$/)
  })
})
