import {
  type Abi,
  type Address,
  BaseError,
  createPublicClient,
  createTestClient,
  decodeErrorResult,
  type Hash,
  type Hex,
  hexToBigInt,
  http,
  type PublicClient,
  type TestClient,
  toHex,
} from 'viem'
import { devnetErrorsAbi } from './compile.ts'
import { protocolErrorsAbi } from './protocol-code.ts'

/** anvil arguments the devnet needs: on-demand mining, fee-ordered pool, zero base fee, roomy blocks. */
export const DEVNET_ANVIL_ARGS = [
  '--no-mining',
  '--order',
  'fees',
  '--base-fee',
  '0',
  '--gas-limit',
  '4000000000',
]

/** Upper bounds per mined block (the builder splits larger batches over several blocks). */
const MAX_TXS_PER_BLOCK = 1_000
const MAX_GAS_PER_BLOCK = 3_000_000_000n
/** Seconds between the blocks of one split batch. */
const SPLIT_BLOCK_SECONDS = 12n

/** A transaction to send from an unlocked or impersonated account. */
export interface TxRequest {
  from: Address
  /** null deploys `data` as contract creation code */
  to: Address | null
  data: Hex
  value?: bigint
  gas: bigint
  /** what the transaction does, for error messages */
  label: string
  /** a transaction meant to revert (a refused oracle report): mined, and an error only if it succeeds */
  expectRevert?: boolean
}

/** A log as returned by JSON-RPC (hex quantities). */
export interface RpcLog {
  address: Address
  topics: [Hex, ...Hex[]] | []
  data: Hex
  blockNumber: Hex
  transactionHash: Hash
  transactionIndex: Hex
  logIndex: Hex
}

/** A receipt as returned by JSON-RPC (hex quantities). */
export interface RpcReceipt {
  transactionHash: Hash
  status: Hex
  from: Address
  to: Address | null
  contractAddress: Address | null
  gasUsed: Hex
  logs: RpcLog[]
}

export interface MinedBlock {
  number: bigint
  hash: Hash
  timestamp: bigint
  /** receipts of the requested transactions, in request order */
  receipts: RpcReceipt[]
  /** every log of the block, including transactions sent by others (e.g. the service) */
  logs: RpcLog[]
  /** sender of every transaction of the block */
  senders: Map<Hash, Address>
}

/** Mines blocks at chosen timestamps with transactions in a chosen order. */
export interface BlockBuilder {
  /** Timestamp of the latest mined block. */
  lastTimestamp(): bigint
  lastBlockNumber(): bigint
  /**
   * Sends `txs` (in this order: descending gas prices under anvil's fee ordering) and mines them at
   * `timestamp`, splitting over blocks `SPLIT_BLOCK_SECONDS` apart when too big for one block. Throws, naming
   * the transactions, when one reverts or is not mined.
   */
  mine(txs: TxRequest[], timestamp: bigint): Promise<MinedBlock[]>
  /** Number of pending transactions in anvil's pool. */
  pendingCount(): Promise<number>
  /** Forgets cached nonces and re-reads the latest block (after an anvil revert rewound the chain). */
  resync(): Promise<void>
}

/** Public and test clients over one batched HTTP transport. */
export function createDevnetClients(rpcUrl: string): { publicClient: PublicClient; testClient: TestClient } {
  const transport = http(rpcUrl, { batch: { batchSize: 500 }, retryCount: 0, timeout: 60_000 })
  return {
    publicClient: createPublicClient({ transport }),
    testClient: createTestClient({ mode: 'anvil', transport }),
  }
}

export class DevnetTxError extends Error {
  override name = 'DevnetTxError'
  constructor(
    message: string,
    readonly failures: { label: string; hash?: Hash; reason?: string }[],
  ) {
    super(message)
  }
}

/**
 * @example
 * const builder = await createBlockBuilder({ publicClient, testClient })
 * const [block] = await builder.mine([{ from, to, data, gas: 100_000n, label: 'deposit' }], ts)
 */
export async function createBlockBuilder(deps: {
  publicClient: PublicClient
  testClient: TestClient
  /** custom errors used to name reverts (default: every protocol and devnet contract error) */
  errorsAbi?: Abi
}): Promise<BlockBuilder> {
  const { publicClient, testClient } = deps
  const errorsAbi = deps.errorsAbi ?? [...protocolErrorsAbi(), ...devnetErrorsAbi()]
  const latest = await publicClient.getBlock({ blockTag: 'latest' })
  let lastTimestamp = latest.timestamp
  let lastNumber = latest.number
  const nonces = new Map<Address, number>()
  // untyped JSON-RPC (viem's public schema has no eth_sendTransaction / eth_getBlockReceipts / txpool_status)
  const rpc = publicClient.request as unknown as (args: {
    method: string
    params?: unknown[]
  }) => Promise<unknown>

  const nextNonce = (address: Address): number => {
    const nonce = nonces.get(address)
    if (nonce === undefined) throw new Error(`nonce of ${address} not loaded`)
    nonces.set(address, nonce + 1)
    return nonce
  }

  const describeFailure = async (tx: TxRequest, blockNumber: bigint): Promise<string> => {
    try {
      await publicClient.call({
        account: tx.from,
        to: tx.to ?? undefined,
        data: tx.data,
        value: tx.value ?? 0n,
        gas: tx.gas,
        blockNumber: blockNumber - 1n,
      })
      return 'reverted (does not revert on replay against the parent block)'
    } catch (error) {
      const data =
        error instanceof BaseError
          ? (error.walk((e) => typeof (e as { data?: unknown }).data === 'string') as { data?: Hex } | null)
              ?.data
          : undefined
      if (data && data.length >= 10) {
        try {
          const decoded = decodeErrorResult({ abi: errorsAbi, data })
          const args = (decoded.args ?? []).map((a) => String(a)).join(', ')
          return `reverted with ${decoded.errorName}(${args})`
        } catch {
          // not a devnet error: fall through to the message
        }
      }
      return (error as { shortMessage?: string; message: string }).shortMessage ?? (error as Error).message
    }
  }

  const mineOne = async (txs: TxRequest[], timestamp: bigint): Promise<MinedBlock> => {
    if (timestamp <= lastTimestamp) {
      throw new Error(`block timestamp ${timestamp} is not after the latest block's ${lastTimestamp}`)
    }
    const unknown = [...new Set(txs.map((tx) => tx.from))].filter((a) => !nonces.has(a))
    const loaded = await Promise.all(
      unknown.map((address) => publicClient.getTransactionCount({ address, blockTag: 'pending' })),
    )
    for (const [i, address] of unknown.entries()) nonces.set(address, loaded[i] ?? 0)
    const sent = await Promise.allSettled(
      txs.map(
        (tx, i) =>
          rpc({
            method: 'eth_sendTransaction',
            params: [
              {
                from: tx.from,
                ...(tx.to === null ? {} : { to: tx.to }),
                data: tx.data,
                value: toHex(tx.value ?? 0n),
                gas: toHex(tx.gas),
                // anvil orders the pool by fee: descending prices keep the request order in the block
                gasPrice: toHex(BigInt(txs.length - i) + 1n),
                nonce: toHex(nextNonce(tx.from)),
              },
            ],
          }) as Promise<Hash>,
      ),
    )
    const hashes: Hash[] = []
    const rejected: { label: string; reason: string }[] = []
    sent.forEach((result, i) => {
      if (result.status === 'fulfilled') hashes.push(result.value)
      else
        rejected.push({
          label: txs[i]?.label ?? '?',
          reason: String(result.reason?.shortMessage ?? result.reason),
        })
    })
    if (rejected.length > 0) {
      await Promise.all(hashes.map((hash) => testClient.dropTransaction({ hash })))
      for (const tx of txs) nonces.delete(tx.from)
      throw new DevnetTxError(
        `anvil rejected ${rejected.length} transaction(s): ${rejected[0]?.label}`,
        rejected,
      )
    }
    await rpc({ method: 'evm_mine', params: [{ timestamp: Number(timestamp), blocks: 1 }] })
    const [block, all] = await Promise.all([
      publicClient.getBlock({ blockTag: 'latest' }),
      rpc({ method: 'eth_getBlockReceipts', params: ['latest'] }) as Promise<RpcReceipt[]>,
    ])
    if (block.timestamp !== timestamp) {
      throw new Error(`mined block ${block.number} at ${block.timestamp}, expected ${timestamp}`)
    }
    lastTimestamp = block.timestamp
    lastNumber = block.number
    const byHash = new Map(all.map((r) => [r.transactionHash, r]))
    const receipts: RpcReceipt[] = []
    const failures: { label: string; hash?: Hash; reason?: string }[] = []
    for (const [i, hash] of hashes.entries()) {
      const tx = txs[i] as TxRequest
      const receipt = byHash.get(hash)
      if (!receipt) {
        failures.push({ label: tx.label, hash, reason: 'not mined' })
        continue
      }
      if ((receipt.status !== '0x1') !== (tx.expectRevert === true)) {
        const reason = tx.expectRevert
          ? 'succeeded, expected to revert'
          : await describeFailure(tx, block.number)
        failures.push({ label: tx.label, hash, reason })
      }
      receipts.push(receipt)
    }
    if (failures.length > 0) {
      for (const failure of failures) {
        if (failure.reason === 'not mined' && failure.hash)
          await testClient.dropTransaction({ hash: failure.hash })
      }
      for (const tx of txs) nonces.delete(tx.from)
      const first = failures[0]
      throw new DevnetTxError(
        `${failures.length} devnet transaction(s) failed in block ${block.number}; first: ${first?.label}: ${first?.reason}`,
        failures,
      )
    }
    return {
      number: block.number,
      hash: block.hash,
      timestamp,
      receipts,
      logs: all.flatMap((r) => r.logs),
      senders: new Map(all.map((r) => [r.transactionHash, r.from])),
    }
  }

  return {
    lastTimestamp: () => lastTimestamp,
    lastBlockNumber: () => lastNumber,
    async mine(txs, timestamp) {
      const chunks: TxRequest[][] = [[]]
      let gas = 0n
      for (const tx of txs) {
        const current = chunks[chunks.length - 1] as TxRequest[]
        if (current.length >= MAX_TXS_PER_BLOCK || gas + tx.gas > MAX_GAS_PER_BLOCK) {
          chunks.push([tx])
          gas = tx.gas
        } else {
          current.push(tx)
          gas += tx.gas
        }
      }
      const blocks: MinedBlock[] = []
      for (const [i, chunk] of chunks.entries()) {
        blocks.push(await mineOne(chunk, timestamp + BigInt(i) * SPLIT_BLOCK_SECONDS))
      }
      return blocks
    },
    async pendingCount() {
      const status = (await rpc({ method: 'txpool_status' })) as { pending: Hex }
      return Number(hexToBigInt(status.pending))
    },
    async resync() {
      nonces.clear()
      const block = await publicClient.getBlock({ blockTag: 'latest' })
      lastNumber = block.number
      // timestamps only move forward: a re-mined branch starts after the lost one's latest block
      if (block.timestamp > lastTimestamp) lastTimestamp = block.timestamp
    },
  }
}
