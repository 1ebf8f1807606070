/**
 * One-off block and state reads with retries: block hashes (for reorg checks), the head block number, and
 * view calls pinned to a historical block.
 */
import {
  type Abi,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type Hash,
  type ReadContractParameters,
  type ReadContractReturnType,
  toHex,
} from 'viem'
import { forEachConcurrently } from '../common/concurrency.ts'
import type { ChainClient } from './client.ts'
import { BlockNotFoundError, ChainRpcError } from './errors.ts'
import { type RetryOptions, withRetry } from './retry.ts'
import { HASH, quantity } from './rpc-values.ts'

/** Retry settings of the one-off reads below (defaults as withRetry's). */
export type ReadRetryOptions = Omit<RetryOptions, 'isRetryable'>

/**
 * Hashes of the given blocks (for reorg checks), fetched with retries, a few at a time.
 * Throws BlockNotFoundError for a block the node does not have.
 *
 * @example
 * const hashes = await getBlockHashes(client, [100n, 101n]) // Map { 100n => '0x…', 101n => '0x…' }
 */
export async function getBlockHashes(
  client: ChainClient,
  blockNumbers: readonly bigint[],
  options: ReadRetryOptions & { concurrency?: number } = {},
): Promise<Map<bigint, Hash>> {
  const { concurrency = 8, ...retry } = options
  const unique = [...new Set(blockNumbers)]
  const hashes = new Map<bigint, Hash>()
  await forEachConcurrently(unique, concurrency, async (blockNumber) => {
    const block = await withRetry(
      () =>
        client.request(
          { method: 'eth_getBlockByNumber', params: [toHex(blockNumber), false] },
          { retryCount: 0 },
        ),
      retry,
    )
    if (!block) {
      throw new BlockNotFoundError(`block ${blockNumber} not found`, {
        details: { block_number: blockNumber.toString() },
      })
    }
    if (typeof block.hash !== 'string' || !HASH.test(block.hash) || quantity(block.number) !== blockNumber) {
      throw new ChainRpcError(`the node returned a malformed block for ${blockNumber}`, {
        details: { block_number: blockNumber.toString() },
      })
    }
    hashes.set(blockNumber, block.hash.toLowerCase() as Hash)
  })
  return hashes
}

/**
 * The node's current block number (uncached), with retries.
 *
 * @example
 * const head = await getHeadBlockNumber(client)
 */
export async function getHeadBlockNumber(
  client: ChainClient,
  options: ReadRetryOptions = {},
): Promise<bigint> {
  return withRetry(
    async () => BigInt(await client.request({ method: 'eth_blockNumber' }, { retryCount: 0 })),
    options,
  )
}

/** Parameters of readAtBlock: a view call pinned to a historical block. */
export type ReadAtBlockParameters<
  abi extends Abi,
  functionName extends ContractFunctionName<abi, 'pure' | 'view'>,
  args extends ContractFunctionArgs<abi, 'pure' | 'view', functionName>,
> = Omit<ReadContractParameters<abi, functionName, args>, 'blockNumber' | 'blockTag'> & {
  blockNumber: bigint
}

/**
 * `readContract` at a given block (needs an archive node for old blocks), retried on transient errors; a
 * revert fails at once.
 *
 * @example
 * const supply = await readAtBlock(client, { address: river, abi: riverAbi, functionName: 'totalSupply', blockNumber: 123n })
 */
export async function readAtBlock<
  const abi extends Abi,
  functionName extends ContractFunctionName<abi, 'pure' | 'view'>,
  const args extends ContractFunctionArgs<abi, 'pure' | 'view', functionName>,
>(
  client: ChainClient,
  params: ReadAtBlockParameters<abi, functionName, args>,
  options: ReadRetryOptions = {},
): Promise<ReadContractReturnType<abi, functionName, args>> {
  return withRetry(
    () => client.readContract(params as unknown as ReadContractParameters<abi, functionName, args>),
    options,
  )
}
