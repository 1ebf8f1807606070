import { Type } from 'typebox'
import { BooleanLike, StringEnum } from '../../schemas.ts'

/** Redeem request ids are uint32 on chain. */
export const MAX_REQUEST_ID = 4_294_967_295

const RedeemV0 = {
  id: Type.Integer(),
  owner: Type.String(),
  height: Type.String(),
  total_amount_lseth: Type.String(),
  claimed_amount_lseth: Type.String(),
  claimable_amount_lseth: Type.String(),
  max_redeemable_amount_eth: Type.String(),
  withdrawal_event_id: Type.Integer(),
  requested_at: Type.Integer(),
  status_claim: StringEnum(['NOT_CLAIMED', 'PARTIALLY_CLAIMED', 'FULLY_CLAIMED']),
  status_satisfaction: StringEnum(['PENDING_SATISFACTION', 'PARTIALLY_SATISFIED', 'FULLY_SATISFIED']),
}
/** A redeem request as v0 shows it. */
export const RedeemRequestV0 = Type.Object(RedeemV0)
/** A redeem request as v1 shows it: v0's fields, its ETH amounts and its time. */
export const RedeemRequestV1 = Type.Object({
  ...RedeemV0,
  claimed_amount_eth: Type.String(),
  claimable_amount_eth: Type.Optional(Type.String()),
  timestamp: Type.String(),
})
/** The redeem queue and withdrawal stack totals (LsETH). */
export const RedeemManagerInfo = Type.Object({
  total_amount_redeem_queue_lseth: Type.String(),
  total_amount_withdrawal_stack_lseth: Type.String(),
})

/** `as_of_block` and `as_of_date`: every redeem read answers as of a point in chain history. */
export const AsOfQuery = {
  as_of_block: Type.Optional(
    Type.String({
      description:
        'Answer as of the end of this block: only RedeemManager events in blocks <= as_of_block count (a request ' +
        'created later is 404 / left out of lists). Decimal digits; at most the indexed head ' +
        '(head - CONFIRMATIONS), else 400 naming it. Not with as_of_date.',
      examples: ['21000000'],
    }),
  ),
  as_of_date: Type.Optional(
    Type.String({
      description:
        'Answer as of the end of this UTC day (YYYY-MM-DD): events in blocks whose timestamp is <= 23:59:59 UTC ' +
        "of the date count. At most the indexed head's date (400 after it); on that date the answer holds what " +
        'is indexed so far. Not with as_of_block.',
      examples: ['2026-04-30'],
    }),
  ),
}
/** The as-of query parameters as a handler reads them. */
export type AsOfParams = { as_of_block?: string; as_of_date?: string }

/** The path of one redeem request: its id. */
export const Idx = Type.Object({ idx: Type.Integer({ minimum: 0, maximum: MAX_REQUEST_ID }) })
/** The query of a v1 read of one request: ETH amounts shown or not, as of when. */
export const DisplayEth = Type.Object({ display_eth: Type.Optional(BooleanLike), ...AsOfQuery })
/** A query of the as-of parameters only. */
export const AsOnly = Type.Object(AsOfQuery)
