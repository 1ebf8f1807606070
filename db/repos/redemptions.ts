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

/** Indexed RedeemManager data (the database serves one chain). */
export function createRedemptionsRepo(db: Queryable) {
  return {
    /** Requests filtered by owners and/or ids (AND), by id. */
    async requests(
      filter: { owners?: string[]; ids?: number[] },
      tx: Queryable = db,
    ): Promise<RedeemRequestRow[]> {
      return tx<RedeemRequestRow>('redeem_requests')
        .select('request_id', 'recipient', 'height', 'amount', 'max_redeemable_eth', 'block_time')
        .modify((q) => {
          if (filter.owners) q.whereIn('recipient', filter.owners)
          if (filter.ids) q.whereIn('request_id', filter.ids)
        })
        .orderBy('request_id')
    },
    /** The request with the highest id (the end of the redeem queue). */
    async lastRequest(tx: Queryable = db): Promise<RedeemRequestRow | undefined> {
      return tx<RedeemRequestRow>('redeem_requests').orderBy('request_id', 'desc').first()
    },
    async withdrawalEvents(tx: Queryable = db): Promise<WithdrawalEventRow[]> {
      return tx<WithdrawalEventRow>('withdrawal_events')
        .select('withdrawal_event_id', 'height', 'amount', 'eth_amount', 'block_time')
        .orderBy('withdrawal_event_id')
    },
    /** Claims of the given requests, in chain order. */
    async claims(requestIds: number[], tx: Queryable = db): Promise<RedeemClaimRow[]> {
      if (requestIds.length === 0) return []
      return tx<RedeemClaimRow>('redeem_claims')
        .select('request_id', 'eth_amount', 'lseth_amount', 'remaining_lseth_amount')
        .whereIn('request_id', requestIds)
        .orderBy([{ column: 'block_number' }, { column: 'log_index' }])
    },
  }
}
export type RedemptionsRepo = ReturnType<typeof createRedemptionsRepo>
