import type { Address } from 'viem'
import { operatorsRegistryAbi, operatorsRegistryLegacyAbi } from './abi.ts'
import { readAllAtBlock, resultOf } from './blocks.ts'
import type { ChainClient } from './client.ts'
import { isTransientRpcError } from './retry.ts'

/** One operator's active validators at a block, as the registry counts them. */
export interface OperatorCount {
  operator_index: number
  funded: number
}

/** The operators read at a block, or why they could not be. */
export type OperatorsRead = { ok: true; operators: OperatorCount[] } | { ok: false; error: unknown }

/**
 * Each of `count` operators' validators at a report's block: `funded` in the registry's 1.x layout (the report's
 * stopped counts are taken off by the day), or `funded - stopped` in the 0.4.0 layout (a report before River 1.0.0
 * carries no stopped counts; the registry kept them). The layout of the report's era (`shape`) is tried first, then
 * the other (a registry upgraded apart from River). `ok: false` when neither decodes; a transient RPC failure
 * that outlived its retries is thrown.
 *
 * @example
 * const read = await readOperatorsAt(client, registry, 5, 17_000_000n, 'legacy')
 * if (read.ok) read.operators // [{ operator_index: 0, funded: 120 }, ...]
 */
export async function readOperatorsAt(
  client: ChainClient,
  registry: Address,
  count: number,
  blockNumber: bigint,
  shape: 'v1' | 'legacy',
): Promise<OperatorsRead> {
  const readWith = async (legacy: boolean): Promise<OperatorCount[]> => {
    const outcomes = await readAllAtBlock(
      client,
      Array.from({ length: count }, (_, index) => ({
        address: registry,
        abi: legacy ? operatorsRegistryLegacyAbi : operatorsRegistryAbi,
        functionName: 'getOperator',
        args: [BigInt(index)],
      })),
      blockNumber,
    )
    return outcomes.map((outcome, index) => {
      const operator = resultOf(outcome) as { funded: number | bigint; stopped?: bigint }
      const funded = BigInt(operator.funded)
      const stopped = operator.stopped ?? 0n
      // another layout's bytes that happened to decode would not keep this invariant
      if (stopped > funded) throw new Error(`operator ${index}: stopped ${stopped} > funded ${funded}`)
      return { operator_index: index, funded: Number(funded - stopped) }
    })
  }
  let error: unknown
  for (const legacy of shape === 'legacy' ? [true, false] : [false, true]) {
    try {
      return { ok: true, operators: await readWith(legacy) }
    } catch (err) {
      // a node that failed for good is the caller's to retry, not a layout that did not decode
      if (isTransientRpcError(err)) throw err
      error = err
    }
  }
  return { ok: false, error }
}
