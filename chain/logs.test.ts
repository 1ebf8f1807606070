import solc from 'solc'
import {
  type Abi,
  type Address,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  encodeAbiParameters,
  getAddress,
  type Hash,
  type Hex,
  http,
  keccak256,
  parseAbi,
  toEventSelector,
  toHex,
} from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Anvil, startAnvil } from '../devnet/anvil.ts'
import { startRpcProxy } from '../test/helpers/rpc-proxy.ts'
import { allowlistAbi, riverAbi } from './abi.ts'
import { chainFor, createChainClient } from './client.ts'
import {
  BlockNotFoundError,
  ChainRpcError,
  InvalidLogError,
  LogDecodeError,
  LogRangeError,
} from './errors.ts'
import {
  createLogDecoder,
  createLogFetcher,
  type DecodedLog,
  decodeLog,
  getBlockHashes,
  getHeadBlockNumber,
  type LogChunk,
  readAtBlock,
} from './logs.ts'

/**
 * A tiny contract that emits the mainnet event signatures in bulk (Transfer and UserDeposit of River,
 * SetAllowlistPermissions of the Allowlist), raw logs of any shape, and keeps a counter for historical reads.
 */
const EMITTER_SOURCE = `
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract Emitter {
  event Transfer(address indexed from, address indexed to, uint256 value);
  event UserDeposit(address indexed depositor, address indexed recipient, uint256 amount);
  event SetAllowlistPermissions(address[] accounts, uint256[] permissions);
  uint256 public total;

  function transfers(uint256 start, uint256 count) external {
    for (uint256 i = start; i < start + count; i++) {
      emit Transfer(address(uint160(i)), address(uint160(i + 1)), i * 1e18 + 1);
    }
    total += count;
  }
  function deposit(address recipient, uint256 amount) external {
    emit UserDeposit(msg.sender, recipient, amount);
  }
  function permissions(address[] calldata accounts, uint256[] calldata perms) external {
    emit SetAllowlistPermissions(accounts, perms);
  }
  function raw(bytes32[] calldata topics, bytes calldata data) external {
    bytes memory d = data;
    uint256 n = topics.length;
    assembly {
      let ptr := add(d, 32)
      let len := mload(d)
      let t := topics.offset
      switch n
      case 0 { log0(ptr, len) }
      case 1 { log1(ptr, len, calldataload(t)) }
      case 2 { log2(ptr, len, calldataload(t), calldataload(add(t, 32))) }
      case 3 { log3(ptr, len, calldataload(t), calldataload(add(t, 32)), calldataload(add(t, 64))) }
      default { log4(ptr, len, calldataload(t), calldataload(add(t, 32)), calldataload(add(t, 64)), calldataload(add(t, 96))) }
    }
  }
  function boom() external pure returns (uint256) {
    revert("boom");
  }
}
`

const emitterAbi = parseAbi([
  'function transfers(uint256 start, uint256 count)',
  'function deposit(address recipient, uint256 amount)',
  'function permissions(address[] accounts, uint256[] perms)',
  'function raw(bytes32[] topics, bytes data)',
  'function total() view returns (uint256)',
  'function boom() view returns (uint256)',
])

/** riverAbi and allowlistAbi events together: what the fetcher requests from both emitters. */
const bothAbi = [...riverAbi, ...allowlistAbi] as const

function compileEmitter(): Hex {
  const input = {
    language: 'Solidity',
    sources: { 'Emitter.sol': { content: EMITTER_SOURCE } },
    settings: { evmVersion: 'prague', outputSelection: { '*': { '*': ['evm.bytecode.object'] } } },
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[]
    contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'))
  return `0x${output.contracts['Emitter.sol']!.Emitter!.evm.bytecode.object}`
}

interface Expected {
  key: string
  address: Address
  blockNumber: bigint
  blockHash: Hash
  transactionHash: Hash
  transactionIndex: number
  logIndex: number
  eventName: string
  args: unknown
}

let anvil: Anvil
let river: Address
let allowlist: Address
/** Blocks of the bulk region, its expected logs (from receipts), and the other regions' blocks. */
let bulkFrom: bigint
let bulkTo: bigint
let expected: Expected[]
let legacyBlock: bigint
let malformedBlock: bigint
let malformedTx: Hash
let quietFrom: bigint
let quietTo: bigint
let totalBlocks: { block: bigint; total: bigint }[]

const keyOf = (log: { blockNumber: bigint; logIndex: number }) => `${log.blockNumber}:${log.logIndex}`

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

function expectExactly(logs: DecodedLog[], want: Expected[]) {
  expect(new Set(logs.map(keyOf)).size).toBe(logs.length) // each once
  expect(logs.map(comparable)).toEqual(want) // same set, same order, same decoding
}

function expectContiguous(chunks: LogChunk[], from: bigint, to: bigint) {
  expect(chunks[0]?.fromBlock).toBe(from)
  expect(chunks.at(-1)?.toBlock).toBe(to)
  for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.fromBlock).toBe(chunks[i - 1]!.toBlock + 1n)
}

beforeAll(async () => {
  anvil = await startAnvil({})
  const transport = http(anvil.rpcUrl)
  const pub = createPublicClient({ transport, pollingInterval: 20 })
  const [sender] = await createWalletClient({ transport }).getAddresses()
  const wallet = createWalletClient({
    account: sender!,
    chain: chainFor(anvil.chainId, anvil.rpcUrl),
    transport,
  })
  const request = pub.request as unknown as (args: { method: string; params: unknown[] }) => Promise<unknown>
  const rpc = (method: string, params: unknown[] = []) => request({ method, params })

  const bytecode = compileEmitter()
  const deploy = async () => {
    const hash = await wallet.deployContract({ abi: emitterAbi, bytecode })
    return (await pub.waitForTransactionReceipt({ hash })).contractAddress!
  }
  river = await deploy()
  allowlist = await deploy()

  // Bulk region: 24 busy blocks (3 emitting txs each, ~250 logs) separated by gaps of empty blocks.
  await rpc('evm_setAutomine', [false])
  const hashes: Hash[] = []
  bulkFrom = (await pub.getBlockNumber({ cacheTime: 0 })) + 1n
  totalBlocks = []
  let total = 0n
  for (let k = 0; k < 24; k++) {
    const base = BigInt(k * 1000 + 1)
    hashes.push(
      await wallet.writeContract({
        address: river,
        abi: emitterAbi,
        functionName: 'transfers',
        args: [base, 150n],
        gas: 5_000_000n,
      }),
    )
    const accounts = [1, 2, 3].map((j) => toHex(BigInt(k * 10 + j + 0x1000), { size: 20 }))
    hashes.push(
      await wallet.writeContract({
        address: allowlist,
        abi: emitterAbi,
        functionName: 'permissions',
        args: [accounts, [5n, 1n, (1n << 255n) | BigInt(k)]],
        gas: 1_000_000n,
      }),
    )
    hashes.push(
      await wallet.writeContract({
        address: river,
        abi: emitterAbi,
        functionName: 'deposit',
        args: [toHex(BigInt(k + 0x2000), { size: 20 }), BigInt(k) * 10n ** 18n],
        gas: 1_000_000n,
      }),
    )
    hashes.push(
      await wallet.writeContract({
        address: river,
        abi: emitterAbi,
        functionName: 'transfers',
        args: [base + 500n, 100n],
        gas: 5_000_000n,
      }),
    )
    await rpc('evm_mine')
    total += 250n
    totalBlocks.push({ block: await pub.getBlockNumber({ cacheTime: 0 }), total })
    await rpc('anvil_mine', [toHex(1 + ((k * 7) % 23))])
  }
  bulkTo = await pub.getBlockNumber({ cacheTime: 0 })

  // Expected logs from the receipts (independent of eth_getLogs), decoded with viem directly.
  expected = []
  for (const hash of hashes) {
    const receipt = await pub.getTransactionReceipt({ hash })
    expect(receipt.status).toBe('success')
    for (const log of receipt.logs) {
      const decoded = decodeEventLog({ abi: bothAbi, data: log.data, topics: log.topics, strict: true })
      expected.push({
        key: keyOf({ blockNumber: log.blockNumber, logIndex: log.logIndex }),
        address: log.address.toLowerCase() as Address,
        blockNumber: log.blockNumber,
        blockHash: log.blockHash,
        transactionHash: log.transactionHash,
        transactionIndex: log.transactionIndex,
        logIndex: log.logIndex,
        eventName: decoded.eventName,
        args: decoded.args,
      })
    }
  }
  expected.sort((a, b) =>
    a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1,
  )
  expect(expected.length).toBe(24 * (150 + 1 + 1 + 100))

  await rpc('evm_setAutomine', [true])
  // Legacy Allowlist log: `address[] indexed accounts`, so topic1 = keccak256 of the accounts.
  const legacyAccounts = encodeAbiParameters(
    [{ type: 'address[]' }],
    [['0x00000000000000000000000000000000000000a1']],
  )
  const legacyHash = await wallet.writeContract({
    address: allowlist,
    abi: emitterAbi,
    functionName: 'raw',
    args: [
      [
        toEventSelector('SetAllowlistPermissions(address[],uint256[])'),
        keccak256(`0x${legacyAccounts.slice(130)}`),
      ],
      encodeAbiParameters([{ type: 'uint256[]' }], [[5n]]),
    ],
  })
  legacyBlock = (await pub.waitForTransactionReceipt({ hash: legacyHash })).blockNumber
  // Malformed log: Transfer's topic0 and topics, but 2 bytes of data instead of 32.
  malformedTx = await wallet.writeContract({
    address: river,
    abi: emitterAbi,
    functionName: 'raw',
    args: [
      [
        toEventSelector('Transfer(address,address,uint256)'),
        toHex(1n, { size: 32 }),
        toHex(2n, { size: 32 }),
      ],
      '0x1234',
    ],
  })
  malformedBlock = (await pub.waitForTransactionReceipt({ hash: malformedTx })).blockNumber
  // Quiet tail for the growth test.
  quietFrom = malformedBlock + 1n
  await rpc('anvil_mine', [toHex(600)])
  quietTo = await pub.getBlockNumber({ cacheTime: 0 })
}, 60_000)

afterAll(async () => {
  await anvil?.stop()
})

describe('createLogFetcher', () => {
  test('behavior: returns exactly the emitted events, in order, each once, decoded', async () => {
    const fetcher = createLogFetcher({ client: createChainClient({ rpcUrl: anvil.rpcUrl }) })
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
      client: createChainClient({ rpcUrl: anvil.rpcUrl }),
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
    const proxy = await startRpcProxy({ upstream: anvil.rpcUrl, faults: { maxLogsRange: 50 } })
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
    const proxy = await startRpcProxy({ upstream: anvil.rpcUrl, faults: { maxLogsResults: 300 } })
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
      upstream: anvil.rpcUrl,
      seed: 42,
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
      upstream: anvil.rpcUrl,
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
      upstream: anvil.rpcUrl,
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
    const proxy = await startRpcProxy({ upstream: anvil.rpcUrl })
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
      upstream: anvil.rpcUrl,
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
    const proxy = await startRpcProxy({ upstream: anvil.rpcUrl, faults: { maxLogsResults: 100 } })
    try {
      const fetcher = createLogFetcher({
        client: createChainClient({ rpcUrl: proxy.url }),
        initialRange: 16n,
      })
      const busy = totalBlocks[0]!.block
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
    const fetcher = createLogFetcher({ client: createChainClient({ rpcUrl: anvil.rpcUrl }) })
    await expect(
      fetcher.fetchLogs({ address: river, abi: riverAbi, fromBlock: 1n, toBlock: quietTo + 5n }),
    ).rejects.toThrow(BlockNotFoundError)
  })

  test('behavior: the range grows while blocks are quiet, up to maxRange', async () => {
    const fetcher = createLogFetcher({
      client: createChainClient({ rpcUrl: anvil.rpcUrl }),
      initialRange: 2n,
      maxRange: 128n,
    })
    const sizes: bigint[] = []
    const logs = await fetcher.fetchLogs({
      address: [river, allowlist],
      abi: bothAbi,
      fromBlock: quietFrom,
      toBlock: quietTo,
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
    const fetcher = createLogFetcher({ client: createChainClient({ rpcUrl: anvil.rpcUrl }) })
    const error = await fetcher
      .fetchLogs({ address: river, abi: riverAbi, fromBlock: malformedBlock, toBlock: malformedBlock })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LogDecodeError)
    expect((error as Error).message).toContain(`block ${malformedBlock}`)
    expect((error as Error).message).toContain(malformedTx)
    expect((error as Error).message).toContain('log index 0')
    expect((error as LogDecodeError).eventName).toBe('Transfer')
  })

  test('behavior: a legacy indexed SetAllowlistPermissions comes back flagged with its permissions', async () => {
    const fetcher = createLogFetcher({ client: createChainClient({ rpcUrl: anvil.rpcUrl }) })
    const [log, ...rest] = await fetcher.fetchLogs({
      address: allowlist,
      abi: allowlistAbi,
      fromBlock: legacyBlock,
      toBlock: legacyBlock,
    })
    expect(rest).toEqual([])
    expect(log?.legacyIndexed).toBe(true)
    if (!log?.legacyIndexed) throw new Error('expected a legacy log')
    expect(log.args.permissions).toEqual([5n])
    expect(log.args.accountsHash).toMatch(/^0x[0-9a-f]{64}$/)
  })
})

describe('getBlockHashes', () => {
  test('behavior: returns the node hashes of the asked blocks, with retries over a faulty RPC', async () => {
    const proxy = await startRpcProxy({ upstream: anvil.rpcUrl, seed: 3, faults: { dropRate: 0.3 } })
    try {
      const client = createChainClient({ rpcUrl: proxy.url })
      const direct = createPublicClient({ transport: http(anvil.rpcUrl) })
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
    const client = createChainClient({ rpcUrl: anvil.rpcUrl })
    const head = await getHeadBlockNumber(client)
    await expect(getBlockHashes(client, [head + 10n])).rejects.toThrow(BlockNotFoundError)
  })
})

describe('readAtBlock', () => {
  test('behavior: reads contract state as of a past block', async () => {
    const client = createChainClient({ rpcUrl: anvil.rpcUrl })
    for (const { block, total } of [totalBlocks[0]!, totalBlocks[5]!, totalBlocks.at(-1)!]) {
      const value = await readAtBlock(client, {
        address: river,
        abi: emitterAbi,
        functionName: 'total',
        blockNumber: block,
      })
      expect(value).toBe(total)
    }
  })

  test('behavior: a revert fails at once, a dropped connection is retried', async () => {
    const proxy = await startRpcProxy({ upstream: anvil.rpcUrl, faults: { dropNext: 2 } })
    try {
      const client = createChainClient({ rpcUrl: proxy.url })
      const value = await readAtBlock(
        client,
        { address: river, abi: emitterAbi, functionName: 'total', blockNumber: bulkTo },
        { baseDelayMs: 1 },
      )
      expect(value).toBe(totalBlocks.at(-1)!.total)
      expect(proxy.stats.dropped).toBe(2)
      proxy.resetStats()
      await expect(
        readAtBlock(
          client,
          { address: river, abi: emitterAbi, functionName: 'boom', blockNumber: bulkTo },
          { baseDelayMs: 1 },
        ),
      ).rejects.toThrow(/boom/)
      expect(proxy.stats.byMethod.eth_call).toBe(1)
    } finally {
      await proxy.stop()
    }
  })
})

describe('createLogDecoder', () => {
  const TRANSFER = toEventSelector('Transfer(address,address,uint256)')
  const PERMISSIONS = toEventSelector('SetAllowlistPermissions(address[],uint256[])')
  const TX = `0x${'ab'.repeat(32)}` as Hash
  const base = {
    address: '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549',
    blockHash: `0x${'11'.repeat(32)}`,
    blockNumber: '0x7b',
    transactionHash: TX,
    transactionIndex: '0x2',
    logIndex: '0x4',
    removed: false,
  }
  const word = (n: bigint) => toHex(n, { size: 32 })
  const transfer = {
    ...base,
    topics: [TRANSFER, word(1n), word(2n)],
    data: word(10n ** 18n),
  }
  const decode = createLogDecoder(riverAbi)

  test('behavior: decodes a log to a typed record with lower-case address and numeric positions', () => {
    expect(decode(transfer)).toEqual({
      address: '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549',
      blockNumber: 123n,
      blockHash: `0x${'11'.repeat(32)}`,
      transactionHash: TX,
      transactionIndex: 2,
      logIndex: 4,
      eventName: 'Transfer',
      args: {
        from: '0x0000000000000000000000000000000000000001',
        to: '0x0000000000000000000000000000000000000002',
        value: 10n ** 18n,
      },
    })
  })

  test('behavior: data too short raises LogDecodeError naming block, tx and log index', () => {
    const error = (() => {
      try {
        decode({ ...transfer, data: '0x1234' })
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(LogDecodeError)
    expect((error as Error).message).toContain('could not decode Transfer at block 123')
    expect((error as Error).message).toContain(`tx ${TX}`)
    expect((error as Error).message).toContain('log index 4')
    expect((error as LogDecodeError).details).toMatchObject({
      block_number: '123',
      transaction_hash: TX,
      log_index: 4,
    })
  })

  test('behavior: strict shape checks: topic count, trailing data, dirty address bits', () => {
    expect(() => decode({ ...transfer, topics: [TRANSFER, word(1n)] })).toThrow(/expected 3 topics, got 2/)
    expect(() => decode({ ...transfer, topics: [...transfer.topics, word(3n)] })).toThrow(LogDecodeError)
    expect(() => decode({ ...transfer, data: `${transfer.data}00` })).toThrow(/not the canonical encoding/)
    expect(() => decode({ ...transfer, topics: [TRANSFER, `0xff${word(1n).slice(4)}`, word(2n)] })).toThrow(
      /topic 1 is not a canonical address/,
    )
    expect(() =>
      decode({ ...transfer, topics: [toEventSelector('Foo(uint256)'), word(1n), word(2n)] }),
    ).toThrow(/matches no event of the ABI/)
  })

  test('behavior: missing position fields or a removed log raise InvalidLogError', () => {
    expect(() => decode({ ...transfer, removed: true })).toThrow(InvalidLogError)
    expect(() => decode({ ...transfer, blockNumber: null })).toThrow(/blockNumber is missing/)
    expect(() => decode({ ...transfer, blockHash: null })).toThrow(/blockHash is missing/)
    expect(() => decode({ ...transfer, transactionHash: undefined })).toThrow(/transactionHash is missing/)
    expect(() => decode({ ...transfer, logIndex: null })).toThrow(/logIndex is missing/)
  })

  test('behavior: the legacy indexed SetAllowlistPermissions is flagged, not thrown; other shapes still throw', () => {
    const accountsHash = keccak256(word(0xa1n))
    const legacy = {
      ...base,
      topics: [PERMISSIONS, accountsHash],
      data: encodeAbiParameters([{ type: 'uint256[]' }], [[5n, 1n]]),
    }
    const log = decodeLog(allowlistAbi, legacy)
    expect(log).toMatchObject({
      eventName: 'SetAllowlistPermissions',
      legacyIndexed: true,
      args: { accountsHash, permissions: [5n, 1n] },
      blockNumber: 123n,
      logIndex: 4,
    })
    expect(() => decodeLog(allowlistAbi, { ...legacy, data: '0x12' })).toThrow(LogDecodeError)
    expect(() =>
      decodeLog(allowlistAbi, { ...legacy, topics: [PERMISSIONS, accountsHash, accountsHash] }),
    ).toThrow(/expected 1 topics, got 3/)
    const current = {
      ...base,
      topics: [PERMISSIONS],
      data: encodeAbiParameters(
        [{ type: 'address[]' }, { type: 'uint256[]' }],
        [['0x00000000000000000000000000000000000000a1'], [5n]],
      ),
    }
    expect(decodeLog(allowlistAbi, current)).toMatchObject({
      eventName: 'SetAllowlistPermissions',
      args: { accounts: [getAddress('0x00000000000000000000000000000000000000a1')], permissions: [5n] },
    })
    expect(decodeLog(allowlistAbi, current).legacyIndexed).toBeUndefined()
  })

  test('behavior: decodes the ProcessedConsensusLayerReport struct event', () => {
    const abi = riverAbi as Abi
    const report = {
      epoch: 1n,
      validatorsBalance: 32n * 10n ** 18n,
      validatorsSkimmedBalance: 0n,
      validatorsExitedBalance: 0n,
      validatorsExitingBalance: 0n,
      validatorsCount: 1,
      stoppedValidatorCountPerOperator: [0, 2],
      rebalanceDepositToRedeemMode: false,
      slashingContainmentMode: false,
    }
    const trace = {
      rewards: 5n,
      pulledELFees: 1n,
      pulledRedeemManagerExceedingEthBuffer: 0n,
      pulledCoverageFunds: 0n,
    }
    const event = riverAbi.find((x) => x.type === 'event' && x.name === 'ProcessedConsensusLayerReport')!
    if (event.type !== 'event') throw new Error('unreachable')
    const data = encodeAbiParameters(event.inputs, [report, trace])
    const log = decodeLog(abi, {
      ...base,
      topics: ['0x49ac0d2bb2a688ca460f7993eb93eccd3b9c9188da6b0727e9a409cf8b105875'],
      data,
    })
    expect(log.eventName).toBe('ProcessedConsensusLayerReport')
    expect(log.args).toEqual({ report, trace })
  })
})
