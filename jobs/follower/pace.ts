/**
 * How far the follower has read a chain, and a pace that makes a block producer wait for it: the embedded
 * devnet's node keeps the state of its latest blocks only (`lsreport up`), and every block the follower still
 * has to read must keep its state.
 */
import type { Db } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'

/**
 * The last block the follower has read on every stream (the lowest of its cursors), or undefined before its
 * first sync.
 *
 * @example
 * await followerBlock(db, 31337) // 412n
 */
export async function followerBlock(db: Db, chainId: number): Promise<bigint | undefined> {
  let lowest: bigint | undefined
  for (const cursor of await createRepos(db).chain.cursors(chainId)) {
    const block = BigInt(cursor.block_number)
    if (lowest === undefined || block < lowest) lowest = block
  }
  return lowest
}

/** Options of `followerPace`. */
export interface FollowerPaceOptions {
  /** blocks the head may be ahead of the follower's last read block before the producer waits */
  maxLead: number
  /** how often the follower's cursors are read while waiting (default 100 ms) */
  pollMs?: number
}

/**
 * A pace for a block producer (the devnet simulator's `setPace`): resolves once the follower has read up to
 * `head - maxLead` (at once before its first sync), or when `signal` aborts.
 *
 * @example
 * devnet.simulator.setPace(followerPace(db, chainId, { maxLead: 32 }))
 */
export function followerPace(
  db: Db,
  chainId: number,
  options: FollowerPaceOptions,
): (head: bigint, signal: AbortSignal) => Promise<void> {
  const pollMs = options.pollMs ?? 100
  return async (head, signal) => {
    while (!signal.aborted) {
      const read = await followerBlock(db, chainId)
      if (read === undefined || head - read <= BigInt(options.maxLead)) return
      await new Promise((resolve) => setTimeout(resolve, pollMs))
    }
  }
}
