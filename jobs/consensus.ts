import type { ConsensusSnapshot, ConsensusSource } from '../chain/beacon.ts'
import type { Logger } from '../common/logger.ts'
import type { Db } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'

/** What one pass of the consensus job did: the epoch of the figures, and whether they were new to store. */
export interface ConsensusPass {
  epoch: number
  source: ConsensusSnapshot['source']
  /** False when the source answered the figures this process already stored (its cache had not expired). */
  stored: boolean
}

/**
 * The consensus job: reads the consensus source (Beacon API or the devnet's facts file, chain/beacon.ts) and
 * keeps its figures as the chain's latest snapshot (`consensus_snapshots`), which the API's validator exit
 * queue and projections read, so no API request reaches the consensus node. The sources cache their answer
 * (Beacon API 10 minutes, devnet facts 2 s): a pass that gets the figures it already stored stores nothing,
 * so `read_at` stays the time they were read from the source. A failed read is thrown (retried with backoff):
 * the API keeps answering from the previous snapshot, or 503 IR5031 before the first one.
 *
 * @example
 * const consensus = createConsensusJob({ db, chainId: 1, source: createConsensusSource({ beaconUrl }), logger })
 * await consensus.runOnce() // { epoch: 400000, source: 'beacon', stored: true }
 */
export function createConsensusJob(deps: {
  db: Db
  chainId: number
  source: ConsensusSource
  logger: Logger
}) {
  const repos = createRepos(deps.db)
  let last: ConsensusSnapshot | undefined
  return {
    /** One pass: read the source, store the figures when they are a new read. */
    async runOnce(): Promise<ConsensusPass> {
      const snapshot = await deps.source.snapshot()
      const readAt = new Date()
      if (snapshot === last) return { epoch: snapshot.epoch, source: snapshot.source, stored: false }
      await repos.consensus.save({ chain_id: deps.chainId, ...snapshot, read_at: readAt })
      last = snapshot
      deps.logger.debug(
        { chain_id: deps.chainId, epoch: snapshot.epoch, source: snapshot.source },
        'consensus snapshot stored',
      )
      return { epoch: snapshot.epoch, source: snapshot.source, stored: true }
    },
  }
}
