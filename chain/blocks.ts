/**
 * One-off block and state reads with retries: block hashes (for reorg checks), the head block number, and
 * view calls pinned to a historical block.
 */
import { type ContractFunctionParameters, type Hash, toHex } from 'viem'
import { forEachConcurrently } from '../common/concurrency.ts'
import type { ChainClient } from './client.ts'
import { BlockNotFoundError, ChainRpcError } from './errors.ts'
import { isTransientRpcError, type RetryOptions, withRetry } from './retry.ts'
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

/** One view call of `readAllAtBlock` (viem's multicall contract form). */
export type ViewCall = ContractFunctionParameters

/** The outcome of one call of `readAllAtBlock`: its result, or the revert it failed with. */
export type ViewOutcome = { status: 'success'; result: unknown } | { status: 'failure'; error: Error }

/**
 * View calls pinned to one historical block (needs an archive node for old blocks), all in one `eth_call`
 * through viem's deployless multicall (an `eth_call` without `to`: no Multicall3 deployment needed, at any
 * block). Retried on transient errors; a call that reverts comes back as its failure (the others still
 * answer), for the caller to throw or tolerate.
 *
 * @example
 * const [supply] = await readAllAtBlock(client, [{ address: river, abi: riverAbi, functionName: 'totalSupply' }], 123n)
 */
export async function readAllAtBlock(
  client: ChainClient,
  calls: readonly ViewCall[],
  blockNumber: bigint,
  options: ReadRetryOptions = {},
): Promise<ViewOutcome[]> {
  return withRetry(async () => {
    const outcomes = (await client.multicall({
      contracts: calls as ViewCall[],
      allowFailure: true,
      deployless: true,
      blockNumber,
    })) as ViewOutcome[]
    // a failed request fails every call of the multicall: thrown here, it is retried
    const lost = outcomes.find((o) => o.status === 'failure' && isTransientRpcError(o.error))
    if (lost?.status === 'failure') throw lost.error
    return outcomes
  }, options)
}

/** The result of a call of `readAllAtBlock`, or its revert thrown. */
export function resultOf(outcome: ViewOutcome | undefined): unknown {
  if (!outcome) throw new Error('no such call')
  if (outcome.status === 'failure') throw outcome.error
  return outcome.result
}
