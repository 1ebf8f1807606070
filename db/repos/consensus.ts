import type { Queryable } from '../index.ts'

/** Where a snapshot's figures came from: a Beacon API, or the devnet simulator's facts file. */
export type ConsensusSnapshotSource = 'beacon' | 'devnet'

/**
 * Network-wide consensus figures at an epoch, as stored (the shape of chain/beacon.ts `ConsensusSnapshot`,
 * which the `consensus` job writes). Balances in Gwei.
 */
export interface StoredConsensusSnapshot {
  chain_id: number
  epoch: number
  active_validators: number
  total_active_balance_gwei: bigint
  /** Effective balance of validators with an exit epoch in the future (queued to exit). */
  queued_exit_balance_gwei: bigint
  /** Validators the withdrawal sweep visits. */
  sweep_eligible_validators: number
  source: ConsensusSnapshotSource
  /** When the job read the figures from their source. */
  read_at: Date
}

interface Row {
  chain_id: number
  epoch: string
  active_validators: number
  total_active_balance_gwei: string
  queued_exit_balance_gwei: string
  sweep_eligible_validators: number
  source: ConsensusSnapshotSource
  read_at: Date
}

/** A stored row with its numbers as numbers and bigints. */
function snapshotOf(row: Row): StoredConsensusSnapshot {
  return {
    chain_id: row.chain_id,
    epoch: Number(row.epoch),
    active_validators: row.active_validators,
    total_active_balance_gwei: BigInt(row.total_active_balance_gwei),
    queued_exit_balance_gwei: BigInt(row.queued_exit_balance_gwei),
    sweep_eligible_validators: row.sweep_eligible_validators,
    source: row.source,
    read_at: row.read_at,
  }
}

/**
 * The latest consensus-layer snapshot per chain (`consensus_snapshots`): written by the `consensus` job,
 * read by the API's validator exit queue and projections.
 *
 * @example
 * await repos.consensus.save({ chain_id: 1, epoch: 400_000, ..., source: 'beacon', read_at: new Date() })
 * const latest = await repos.consensus.latest() // undefined before the job's first run
 */
export function createConsensusRepo(db: Queryable) {
  return {
    /**
     * Keeps `snapshot` as its chain's latest, unless the stored one was read later (a slow run of the job
     * never replaces a newer read).
     */
    async save(snapshot: StoredConsensusSnapshot): Promise<void> {
      const row = {
        chain_id: snapshot.chain_id,
        epoch: String(snapshot.epoch),
        active_validators: snapshot.active_validators,
        total_active_balance_gwei: snapshot.total_active_balance_gwei.toString(),
        queued_exit_balance_gwei: snapshot.queued_exit_balance_gwei.toString(),
        sweep_eligible_validators: snapshot.sweep_eligible_validators,
        source: snapshot.source,
        read_at: snapshot.read_at,
      }
      await db('consensus_snapshots')
        .insert(row)
        .onConflict('chain_id')
        .merge()
        .where('consensus_snapshots.read_at', '<=', snapshot.read_at)
    },
    /** The snapshot of `chainId`, or, without it, the most recently read of any chain; undefined when none. */
    async latest(chainId?: number): Promise<StoredConsensusSnapshot | undefined> {
      const row: Row | undefined = await db<Row>('consensus_snapshots')
        .modify((q) => {
          if (chainId !== undefined) q.where({ chain_id: chainId })
        })
        .orderBy('read_at', 'desc')
        .first()
      return row ? snapshotOf(row) : undefined
    },
  }
}
/** The consensus repository `createConsensusRepo` returns. */
export type ConsensusRepo = ReturnType<typeof createConsensusRepo>
