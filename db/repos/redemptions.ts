import type { Knex } from 'knex'
import type { Queryable } from '../index.ts'

export interface RedeemRequestRow {
  request_id: string
  recipient: string
  height: string
  amount: string
  max_redeemable_eth: string
  block_time: Date
}

export interface WithdrawalEventRow {
  withdrawal_event_id: string
  height: string
  amount: string
  eth_amount: string
  block_time: Date
}

export interface RedeemClaimRow {
  request_id: string
  eth_amount: string
  lseth_amount: string
  remaining_lseth_amount: string
}

/**
 * A point in chain history: only events at or before it count. `block`: events with block_number <= block;
 * `time`: events whose block time is <= time (the end of a UTC day for `as_of_date`). Omitted: everything
 * indexed.
 */
export interface RedeemAsOf {
  block?: bigint
  time?: Date
}

/** The follower's progress on the RedeemManager stream: the last block ingested and its time. */
export interface RedeemIndexedHead {
  block_number: bigint
  time: Date
}

/** The RedeemManager events ingested by the follower (jobs/follower/index.ts names the stream so). */
const REDEEM_STREAM = 'redeemManager'

/** Restricts an event query to rows at or before `asOf`. */
function atOrBefore(q: Knex.QueryBuilder, asOf: RedeemAsOf | undefined): void {
  if (asOf?.block !== undefined) q.where('block_number', '<=', asOf.block.toString())
  if (asOf?.time !== undefined) q.where('block_time', '<=', asOf.time)
}

/** Indexed RedeemManager data (the database serves one chain). */
export function createRedemptionsRepo(db: Queryable) {
  return {
    /** Requests filtered by owners and/or ids (AND), by id; only those created at or before `asOf`. */
    async requests(filter: {
      owners?: string[]
      ids?: number[]
      asOf?: RedeemAsOf
    }): Promise<RedeemRequestRow[]> {
      return db<RedeemRequestRow>('redeem_requests')
        .select('request_id', 'recipient', 'height', 'amount', 'max_redeemable_eth', 'block_time')
        .modify((q) => {
          if (filter.owners) q.whereIn('recipient', filter.owners)
          if (filter.ids) q.whereIn('request_id', filter.ids)
          atOrBefore(q, filter.asOf)
        })
        .orderBy('request_id')
    },
    /** The request with the highest id (the end of the redeem queue) at `asOf`. */
    async lastRequest(asOf?: RedeemAsOf): Promise<RedeemRequestRow | undefined> {
      return db<RedeemRequestRow>('redeem_requests')
        .modify((q) => atOrBefore(q, asOf))
        .orderBy('request_id', 'desc')
        .first()
    },
    /** The withdrawal stack (ReportedWithdrawal events) at `asOf`, by id. */
    async withdrawalEvents(asOf?: RedeemAsOf): Promise<WithdrawalEventRow[]> {
      return db<WithdrawalEventRow>('withdrawal_events')
        .select('withdrawal_event_id', 'height', 'amount', 'eth_amount', 'block_time')
        .modify((q) => atOrBefore(q, asOf))
        .orderBy('withdrawal_event_id')
    },
    /** Claims of the given requests made at or before `asOf`, in chain order. */
    async claims(requestIds: number[], asOf?: RedeemAsOf): Promise<RedeemClaimRow[]> {
      if (requestIds.length === 0) return []
      return db<RedeemClaimRow>('redeem_claims')
        .select('request_id', 'eth_amount', 'lseth_amount', 'remaining_lseth_amount')
        .whereIn('request_id', requestIds)
        .modify((q) => atOrBefore(q, asOf))
        .orderBy([{ column: 'block_number' }, { column: 'log_index' }])
    },
    /**
     * How far the follower has ingested RedeemManager events (its cursor, at head - CONFIRMATIONS) and that
     * block's time; undefined before the first sync.
     */
    async indexedHead(): Promise<RedeemIndexedHead | undefined> {
      const cursor: { chain_id: number; block_number: string } | undefined = await db('chain_cursors')
        .where('stream', REDEEM_STREAM)
        .first('chain_id', 'block_number')
      if (!cursor) return undefined
      // the cursor's own block is stored with its chunk; after a reorg rollback, the newest block below it
      const block: { time: Date } | undefined = await db('chain_blocks')
        .where('chain_id', cursor.chain_id)
        .where('number', '<=', cursor.block_number)
        .orderBy('number', 'desc')
        .first('time')
      if (!block) return undefined
      return { block_number: BigInt(cursor.block_number), time: block.time }
    },
  }
}
export type RedemptionsRepo = ReturnType<typeof createRedemptionsRepo>
