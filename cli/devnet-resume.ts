/**
 * Whether the database's chain data and the embedded devnet's chain are one chain (`lsreport up`): after a
 * graceful stop the saved chain ends where (or after) the follower read; after a stop that could not save
 * (SIGKILL) the database may hold blocks the saved chain lacks, or a chain no saved state has.
 */
import type { Db } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'

/** Stored blocks looked at, newest first, for one the chain still has. */
const FORK_DEPTH = 64

/** How the database's chain rows stand against the devnet's chain. */
export type StoreVersusChain =
  /** no chain rows for this chain id: nothing to compare */
  | { kind: 'empty' }
  /** every cursor's block is on the chain with the same hash */
  | { kind: 'same'; cursor: bigint }
  /**
   * the database read past the chain's head, or a block the chain has another hash for, but one of its newest
   * stored blocks at or below the head is on the chain: the same chain, older or forked (the follower rolls back
   * what the database read after it, as a reorg)
   */
  | { kind: 'behind'; cursor: bigint; head: bigint }
  /** the database read another chain (a new devnet, or state saved elsewhere): its blocks are not on this one */
  | { kind: 'different'; cursor: bigint; head: bigint }

/**
 * Compares the follower's cursors and stored block hashes with the chain (`hashAt`: the chain's hash of a
 * block at or below `head`).
 *
 * @example
 * await compareStoreWithChain(db, 31337, head, (n) => client.getBlock({ blockNumber: n }).then((b) => b.hash))
 * // { kind: 'same', cursor: 412n }
 */
export async function compareStoreWithChain(
  db: Db,
  chainId: number,
  head: bigint,
  hashAt: (block: bigint) => Promise<string>,
): Promise<StoreVersusChain> {
  const repos = createRepos(db)
  const cursors = await repos.chain.cursors(chainId)
  if (cursors.length === 0) return { kind: 'empty' }
  let top = 0n
  let onChain = true
  for (const c of cursors) {
    const block = BigInt(c.block_number)
    if (block > top) top = block
    if (block > head) onChain = false
    else if (c.block_hash && (await hashAt(block)) !== c.block_hash) onChain = false
  }
  if (onChain) return { kind: 'same', cursor: top }
  // the same chain when one of the newest stored blocks at or below the head is on it (the follower's rollback
  // point); deeper than that the node no longer keeps the states the follower would read again
  for (const stored of await repos.chain.recentBlocks(chainId, head, FORK_DEPTH)) {
    if ((await hashAt(stored.number)) === stored.hash) return { kind: 'behind', cursor: top, head }
  }
  return { kind: 'different', cursor: top, head }
}
