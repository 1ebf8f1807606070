import http from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  type Address,
  encodeAbiParameters,
  type Hex,
  keccak256,
  pad,
  stringToHex,
  toEventSelector,
  toHex,
} from 'viem'
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

/** A JSON-RPC error answer of the fake node, and the block span its text advises (a suggestion or a cap). */
interface Refusal {
  status?: number
  error: { code: number; message: string; data?: unknown }
  advised?: bigint
}

interface FakeNodeRequest {
  from: bigint
  to: bigint
  refusal?: Refusal
}

interface FakeNode {
  url: string
  requests: FakeNodeRequest[]
  stop(): Promise<void>
}

const FAKE_RIVER = '0x00000000000000000000000000000000000000aa'
const TRANSFER = toEventSelector('event Transfer(address indexed from, address indexed to, uint256 value)')
const FAKE_HEAD = 24_000n
/** One Transfer in every 10th block. */
const hasLog = (block: bigint) => block % 10n === 0n
const logsIn = (from: bigint, to: bigint) => {
  let n = 0
  for (let b = from; b <= to; b++) if (hasLog(b)) n++
  return n
}
/** The last block `to` from `from` such that [from, to] holds at most `max` logs. */
const lastBlockWithin = (from: bigint, max: number) => {
  let n = 0
  let b = from - 1n
  while (b < FAKE_HEAD && n + (hasLog(b + 1n) ? 1 : 0) <= max) {
    b++
    if (hasLog(b)) n++
  }
  return b
}

function fakeLog(block: bigint) {
  return {
    address: FAKE_RIVER,
    topics: [TRANSFER, pad('0x01', { size: 32 }), pad('0x02', { size: 32 })],
    data: encodeAbiParameters([{ type: 'uint256' }], [block]),
    blockNumber: toHex(block),
    blockHash: keccak256(toHex(block)),
    transactionHash: keccak256(stringToHex(`tx ${block}`)),
    transactionIndex: '0x0',
    logIndex: '0x0',
    removed: false,
  }
}

/**
 * A tiny JSON-RPC node over node:http: `eth_blockNumber` and `eth_getLogs` over a synthetic chain of FAKE_HEAD
 * blocks with one Transfer every 10th block, refusing what `refuse` refuses with that provider's answer.
 */
async function startFakeNode(
  refuse: (from: bigint, to: bigint, logs: number, call: number) => Refusal | undefined,
): Promise<FakeNode> {
  const requests: FakeNodeRequest[] = []
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk) => {
      raw += chunk
    })
    req.on('end', () => {
      const call = JSON.parse(raw) as {
        id: number
        method: string
        params: { fromBlock: Hex; toBlock: Hex }[]
      }
      const answer = (status: number, payload: Record<string, unknown>) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...payload }))
      }
      if (call.method === 'eth_blockNumber') return answer(200, { result: toHex(FAKE_HEAD) })
      if (call.method !== 'eth_getLogs')
        return answer(200, { error: { code: -32601, message: 'method not found' } })
      const from = BigInt(call.params[0]!.fromBlock)
      const to = BigInt(call.params[0]!.toBlock)
      const refusal = refuse(from, to, logsIn(from, to), requests.length)
      requests.push({ from, to, ...(refusal ? { refusal } : {}) })
      if (refusal) return answer(refusal.status ?? 200, { error: refusal.error })
      const logs = []
      for (let b = from; b <= to; b++) if (hasLog(b)) logs.push(fakeLog(b))
      return answer(200, { result: logs })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const upperHex = (n: bigint) => `0x${n.toString(16).toUpperCase()}`
const span = (r: { from: bigint; to: bigint }) => r.to - r.from + 1n

interface ProviderScenario {
  name: string
  /** Where the answer's exact text was seen (its numbers are filled in for each request). */
  seen: string
  initialRange: bigint
  refuse: (from: bigint, to: bigint, logs: number) => Refusal | undefined
  /** A span the node never accepts: once learned, the fetcher must not ask for more. */
  cap?: bigint
}

const SCENARIOS: ProviderScenario[] = [
  {
    name: 'Alchemy, 500-block plan cap with the range that should work (HTTP 400)',
    seen: 'https://github.com/BobTheBuidler/dank_mids/issues/772',
    initialRange: 2000n,
    cap: 500n,
    refuse: (from, to) =>
      to - from + 1n > 500n
        ? {
            status: 400,
            advised: 500n,
            error: {
              code: -32600,
              message: `You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [${toHex(from)}, ${toHex(from + 499n)}]`,
            },
          }
        : undefined,
  },
  {
    name: 'Alchemy, log response size with the range that should work',
    seen: 'https://github.com/ethereum/go-ethereum/issues/25343',
    initialRange: 4000n,
    refuse: (from, _to, logs) => {
      if (logs <= 40) return undefined
      const end = lastBlockWithin(from, 40)
      return {
        advised: end - from + 1n,
        error: {
          code: -32602,
          message: `Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters and the response size limit, this block range should work: [${toHex(from)}, ${toHex(end)}]`,
        },
      }
    },
  },
  {
    name: 'Infura, too many results with the range to try',
    seen: 'https://github.com/smartcontractkit/chainlink/blob/develop/core/chains/evm/client/errors_test.go',
    initialRange: 4000n,
    refuse: (from, _to, logs) => {
      if (logs <= 40) return undefined
      const end = lastBlockWithin(from, 40)
      return {
        advised: end - from + 1n,
        error: {
          code: -32005,
          data: { from: upperHex(from), limit: 10000, to: upperHex(end) },
          message: `query returned more than 10000 results. Try with this block range [${upperHex(from)}, ${upperHex(end)}].`,
        },
      }
    },
  },
  {
    name: 'QuickNode, 10,000-block cap (HTTP 413)',
    seen: 'https://github.com/eternalsafe/wallet/issues/57',
    initialRange: 20_000n,
    cap: 10_000n,
    refuse: (from, to) =>
      to - from + 1n > 10_000n
        ? {
            status: 413,
            advised: 10_000n,
            error: { code: -32614, message: 'eth_getLogs is limited to a 10,000 range' },
          }
        : undefined,
  },
  {
    name: 'Cloudflare, 800-block cap',
    seen: 'https://github.com/ponder-sh/ponder/blob/main/packages/utils/src/parseGetLogsError/parseGetLogsError.ts',
    initialRange: 2000n,
    cap: 800n,
    refuse: (from, to) =>
      to - from + 1n > 800n
        ? {
            advised: 800n,
            error: {
              code: -32047,
              message: "Invalid eth_getLogs request. 'fromBlock'-'toBlock' range too large. Max range: 800",
            },
          }
        : undefined,
  },
  {
    name: 'BSC / PublicNode, 5000-block cap',
    seen: 'https://github.com/AlphaWallet/alpha-wallet-android/issues/2736',
    initialRange: 20_000n,
    cap: 5000n,
    refuse: (from, to) =>
      to - from + 1n > 5000n
        ? { advised: 5000n, error: { code: -32000, message: 'exceed maximum block range: 5000' } }
        : undefined,
  },
  {
    name: 'Chainstack, a range limit without a number (halves)',
    seen: 'https://github.com/matter-labs/zksync-era/pull/2974',
    initialRange: 2000n,
    refuse: (from, to) =>
      to - from + 1n > 100n
        ? {
            error: {
              code: -32602,
              message:
                'Block range limit exceeded. See more details at https://docs.chainstack.com/docs/limits#evm-range-limits',
            },
          }
        : undefined,
  },
  {
    name: 'reth, max results echoing the requested range (halves)',
    seen: 'https://github.com/paradigmxyz/reth/issues/23810',
    initialRange: 4000n,
    refuse: (from, to, logs) =>
      logs > 40
        ? {
            advised: to - from + 1n,
            error: {
              code: -32602,
              message: `query exceeds max results 20000, retry with the range ${from}-${to}`,
            },
          }
        : undefined,
  },
]

describe("createLogFetcher against providers' refusals (a local JSON-RPC server)", () => {
  const allBlocks: bigint[] = []
  for (let b = 1n; b <= FAKE_HEAD; b++) if (hasLog(b)) allBlocks.push(b)

  test.each(SCENARIOS)('behavior: $name: takes the advised range and returns every log', async (scenario) => {
    const node = await startFakeNode(scenario.refuse)
    try {
      const fetcher = createLogFetcher({
        client: createChainClient({ rpcUrl: node.url }),
        initialRange: scenario.initialRange,
        baseDelayMs: 1,
      })
      const chunks: LogChunk[] = []
      const logs = await fetcher.fetchLogs({
        address: FAKE_RIVER,
        abi: riverAbi,
        fromBlock: 1n,
        toBlock: FAKE_HEAD,
        onChunk: (c) => {
          chunks.push(c)
        },
      })
      expect(logs.map((l) => l.blockNumber)).toEqual(allBlocks)
      expect(logs.every((l) => l.eventName === 'Transfer' && l.args.value === l.blockNumber)).toBe(true)
      expectContiguous(chunks, 1n, FAKE_HEAD)

      const refused = node.requests.filter((r) => r.refusal)
      expect(refused.length).toBeGreaterThan(0)
      node.requests.forEach((request, i) => {
        if (!request.refusal) return
        const next = node.requests[i + 1]!
        const size = span(request)
        const advised = request.refusal.advised
        const wanted = advised !== undefined && advised < size ? advised : size / 2n
        expect(next.from, `request ${i + 1} starts where the refused one did`).toBe(request.from)
        expect(span(next), `request ${i + 1} after ${size} blocks were refused`).toBe(
          wanted < FAKE_HEAD - request.from + 1n ? wanted : FAKE_HEAD - request.from + 1n,
        )
      })
      if (scenario.cap !== undefined) {
        const firstRefusal = node.requests.findIndex((r) => r.refusal)
        const after = node.requests.slice(firstRefusal + 1)
        expect(after.every((r) => span(r) <= scenario.cap!)).toBe(true)
        expect(refused.length).toBe(1) // the cap is learned once: no probing past it
      }
    } finally {
      await node.stop()
    }
  })

  test('behavior: a rate limit (Infura, HTTP 429) is waited out on the same range, not shrunk', async () => {
    // https://github.com/gochain/web3/issues/180
    const node = await startFakeNode((_from, _to, _logs, call) =>
      call < 2
        ? {
            status: 429,
            error: {
              code: -32005,
              message: 'daily request count exceeded, request rate limited',
              data: {
                rate: { allowed_rps: 1, backoff_seconds: 0, current_rps: 2.2 },
                see: 'https://infura.io/dashboard',
              },
            },
          }
        : undefined,
    )
    try {
      const fetcher = createLogFetcher({
        client: createChainClient({ rpcUrl: node.url }),
        initialRange: 3000n,
        maxRange: 3000n,
        baseDelayMs: 1,
      })
      const logs = await fetcher.fetchLogs({
        address: FAKE_RIVER,
        abi: riverAbi,
        fromBlock: 1n,
        toBlock: FAKE_HEAD,
      })
      expect(logs.map((l) => l.blockNumber)).toEqual(allBlocks)
      expect(node.requests.slice(0, 3).map(span)).toEqual([3000n, 3000n, 3000n])
      expect(fetcher.range).toBe(3000n)
    } finally {
      await node.stop()
    }
  })

  test('behavior: an Alchemy monthly-capacity refusal fails the fetch instead of shrinking to one block', async () => {
    // https://github.com/xmtp/xmtpd/issues/672
    const node = await startFakeNode(() => ({
      status: 403,
      error: {
        code: -32600,
        message:
          'Monthly capacity limit exceeded. Visit https://dashboard.alchemyapi.io/settings/billing to upgrade your scaling policy for continued service.',
      },
    }))
    try {
      const fetcher = createLogFetcher({ client: createChainClient({ rpcUrl: node.url }), baseDelayMs: 1 })
      const error = await fetcher
        .fetchLogs({ address: FAKE_RIVER, abi: riverAbi, fromBlock: 1n, toBlock: FAKE_HEAD })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ChainRpcError)
      expect((error as Error).message).toContain('Monthly capacity limit exceeded')
      expect(node.requests).toHaveLength(1)
    } finally {
      await node.stop()
    }
  })
})
