import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { toAddress as normalizeAddress } from '../../common/address.ts'
import type { Repos } from '../../db/repos/index.ts'
import type { RedeemAsOf, WithdrawalEventRow } from '../../db/repos/redemptions.ts'
import {
  computeRedeemManagerInfo,
  computeRedeemRequestStates,
  formatUnits18,
  presentRedeemRequest,
  type RedeemRequestState,
  type WithdrawalEventInput,
} from '../../engine/index.ts'
import { ApiError } from '../errors.ts'
import { parseDate } from '../reporting/dates.ts'
import { BooleanLike, errorResponses, StringEnum, toBool } from '../schemas.ts'

/** At most this many ids per GET /eth/v1/redeems (docs/decisions.md "Limits"). */
export const MAX_REDEEM_IDS = 500
/** Redeem request ids are uint32 on chain. */
const MAX_REQUEST_ID = 4_294_967_295

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
const RedeemRequestV0 = Type.Object(RedeemV0)
const RedeemRequestV1 = Type.Object({
  ...RedeemV0,
  claimed_amount_eth: Type.String(),
  claimable_amount_eth: Type.Optional(Type.String()),
  timestamp: Type.String(),
})
const RedeemManagerInfo = Type.Object({
  total_amount_redeem_queue_lseth: Type.String(),
  total_amount_withdrawal_stack_lseth: Type.String(),
})

/**
 * A comma-separated query list (`ids`, `owner`): items trimmed; an empty item ("1,,2", a trailing comma) is
 * refused, never skipped; more than MAX_REDEEM_IDS items: 400 IR1006.
 */
function parseList(value: string, field: string, what: string): string[] {
  const items = value.split(',').map((i) => i.trim())
  if (items.some((i) => i === '')) {
    throw new ApiError('IR1000', `${field} must be a comma-separated list of ${what} without empty items`)
  }
  if (items.length > MAX_REDEEM_IDS) {
    throw new ApiError('IR1006', `${field} lists more than ${MAX_REDEEM_IDS} ${what}`)
  }
  return items
}

function parseOwners(owner: string | undefined): string[] | undefined {
  if (owner === undefined) return undefined
  return parseList(owner, 'owner', '0x addresses').map((o) => normalizeAddress(o, 'owner'))
}

function parseIds(ids: string | undefined): number[] | undefined {
  if (ids === undefined) return undefined
  return parseList(ids, 'ids', 'redeem request ids').map((p) => {
    if (!/^\d{1,10}$/.test(p) || Number(p) > MAX_REQUEST_ID) {
      throw new ApiError(
        'IR1000',
        `ids must be integers from 0 to ${MAX_REQUEST_ID} (got ${JSON.stringify(p)})`,
      )
    }
    return Number(p)
  })
}

/** `as_of_block` and `as_of_date`: every redeem read answers as of a point in chain history. */
const AsOfQuery = {
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
type AsOfParams = { as_of_block?: string; as_of_date?: string }

/** Longest as_of_block accepted (uint64 fits in 20 digits). */
const AS_OF_BLOCK = /^\d{1,20}$/

/** An indexed ReportedWithdrawal as the engine takes it (the redeem reads and the projections). */
export function eventInput(e: WithdrawalEventRow): WithdrawalEventInput {
  return {
    id: Number(e.withdrawal_event_id),
    height: BigInt(e.height),
    amount: BigInt(e.amount),
    eth_amount: BigInt(e.eth_amount),
    reported_at: Math.floor(e.block_time.getTime() / 1000),
  }
}

/**
 * Redemption reads, v1 and v0 (public: docs/decisions.md "Authentication and scopes"), computed by the engine from indexed
 * events.
 */
export function redeemRoutes(app: FastifyInstance, deps: { repos: Repos }) {
  const { redemptions } = deps.repos

  /**
   * The point in history a read asks for (undefined: everything indexed). 400 IR1000 when both parameters
   * are given, a value is malformed, nothing is indexed yet, or it lies past the indexed head.
   */
  async function asOfOf(q: AsOfParams): Promise<RedeemAsOf | undefined> {
    if (q.as_of_block === undefined && q.as_of_date === undefined) return undefined
    if (q.as_of_block !== undefined && q.as_of_date !== undefined) {
      throw new ApiError('IR1000', 'give as_of_block or as_of_date, not both')
    }
    if (q.as_of_block !== undefined && !AS_OF_BLOCK.test(q.as_of_block)) {
      throw new ApiError(
        'IR1000',
        `as_of_block must be a block number in decimal digits (got ${JSON.stringify(q.as_of_block)})`,
      )
    }
    const date = q.as_of_date === undefined ? undefined : parseDate(q.as_of_date, 'as_of_date')
    const head = await redemptions.indexedHead()
    if (!head)
      throw new ApiError(
        'IR1000',
        'no RedeemManager events are indexed yet: as_of reads need the follower to have synced',
      )
    const headDate = head.time.toISOString().slice(0, 10)
    if (date !== undefined) {
      if (date > headDate) {
        throw new ApiError(
          'IR1000',
          `as_of_date ${date} is after the indexed head's date ${headDate} (block ${head.block_number})`,
        )
      }
      return { time: new Date(`${date}T23:59:59Z`) }
    }
    const block = BigInt(q.as_of_block as string)
    if (block > head.block_number) {
      throw new ApiError(
        'IR1000',
        `as_of_block ${block} is above the indexed head ${head.block_number} (${headDate}); retry once the follower has ingested it`,
      )
    }
    return { block }
  }

  /** How a 404 names the point in history it was asked at. */
  function at(asOf: RedeemAsOf | undefined, q: AsOfParams): string {
    if (asOf === undefined) return ''
    return q.as_of_block !== undefined ? ` at as_of_block ${q.as_of_block}` : ` at as_of_date ${q.as_of_date}`
  }

  async function states(
    filter: { owners?: string[]; ids?: number[] },
    asOf?: RedeemAsOf,
  ): Promise<RedeemRequestState[]> {
    const [requests, events] = await Promise.all([
      redemptions.requests(asOf ? { ...filter, asOf } : filter),
      redemptions.withdrawalEvents(asOf),
    ])
    const claims = await redemptions.claims(
      requests.map((r) => Number(r.request_id)),
      asOf,
    )
    return computeRedeemRequestStates(
      requests.map((r) => ({
        id: Number(r.request_id),
        owner: r.recipient,
        height: BigInt(r.height),
        amount: BigInt(r.amount),
        max_redeemable_eth: BigInt(r.max_redeemable_eth),
        requested_at: Math.floor(r.block_time.getTime() / 1000),
      })),
      events.map(eventInput),
      claims.map((c) => ({
        redeem_request_id: Number(c.request_id),
        lseth_amount: BigInt(c.lseth_amount),
        eth_amount: BigInt(c.eth_amount),
        remaining_lseth_amount: BigInt(c.remaining_lseth_amount),
      })),
    )
  }

  async function one(idx: number, q: AsOfParams): Promise<RedeemRequestState> {
    const asOf = await asOfOf(q)
    const [state] = await states({ ids: [idx] }, asOf)
    if (!state) throw new ApiError('IR3400', `redeem request ${idx} not found${at(asOf, q)}`)
    return state
  }

  async function info(request: { query: unknown }) {
    const asOf = await asOfOf(request.query as AsOfParams)
    const [last, events] = await Promise.all([
      redemptions.lastRequest(asOf),
      redemptions.withdrawalEvents(asOf),
    ])
    const totals = computeRedeemManagerInfo(
      last ? [{ id: Number(last.request_id), height: BigInt(last.height), amount: BigInt(last.amount) }] : [],
      events.map(eventInput),
    )
    return {
      total_amount_redeem_queue_lseth: formatUnits18(totals.total_amount_redeem_queue_lseth),
      total_amount_withdrawal_stack_lseth: formatUnits18(totals.total_amount_withdrawal_stack_lseth),
    }
  }

  const Idx = Type.Object({ idx: Type.Integer({ minimum: 0, maximum: MAX_REQUEST_ID }) })
  const DisplayEth = Type.Object({ display_eth: Type.Optional(BooleanLike), ...AsOfQuery })
  const AsOnly = Type.Object(AsOfQuery)

  app.get(
    '/eth/v1/redeems',
    {
      schema: {
        tags: ['redemptions'],
        summary:
          'Redeem requests by owner and/or ids (AND); unknown ids are omitted; as_of_block or as_of_date: as it stood then',
        querystring: Type.Object({
          owner: Type.Optional(Type.String()),
          ids: Type.Optional(Type.String()),
          display_eth: Type.Optional(BooleanLike),
          ...AsOfQuery,
        }),
        response: { 200: Type.Array(RedeemRequestV1), ...errorResponses(400) },
      },
    },
    async (request) => {
      const q = request.query as {
        owner?: string
        ids?: string
        display_eth?: boolean | 'true' | 'false'
      } & AsOfParams
      const owners = parseOwners(q.owner)
      const ids = parseIds(q.ids)
      if (!owners && !ids) throw new ApiError('IR1000', 'give owner, ids or both')
      const displayEth = toBool(q.display_eth, true)
      const asOf = await asOfOf(q)
      return (await states({ ...(owners ? { owners } : {}), ...(ids ? { ids } : {}) }, asOf)).map((s) =>
        presentRedeemRequest(s, 'v1', { displayEth }),
      )
    },
  )

  app.get(
    '/eth/v1/redeems/:idx',
    {
      schema: {
        tags: ['redemptions'],
        summary: 'One redeem request (as_of_block or as_of_date: as it stood then; 404 if not created yet)',
        params: Idx,
        querystring: DisplayEth,
        response: { 200: RedeemRequestV1, ...errorResponses(400, 404) },
      },
    },
    async (request) => {
      const { idx } = request.params as { idx: number }
      const q = request.query as { display_eth?: boolean | 'true' | 'false' } & AsOfParams
      return presentRedeemRequest(await one(idx, q), 'v1', { displayEth: toBool(q.display_eth, true) })
    },
  )

  app.get(
    '/eth/v1/redeems_info',
    {
      schema: {
        tags: ['redemptions'],
        summary:
          'Redeem queue and withdrawal stack totals (LsETH); as_of_block or as_of_date: as they stood then',
        querystring: AsOnly,
        response: { 200: RedeemManagerInfo, ...errorResponses(400) },
      },
    },
    info,
  )

  app.get(
    '/eth/v0/redeems',
    {
      schema: {
        tags: ['redemptions'],
        summary: 'Redeem requests of an owner (v0 fields)',
        querystring: Type.Object({ owner: Type.String(), ...AsOfQuery }),
        response: { 200: Type.Array(RedeemRequestV0), ...errorResponses(400) },
      },
    },
    async (request) => {
      const q = request.query as { owner: string } & AsOfParams
      const owners = parseOwners(q.owner) as string[]
      return (await states({ owners }, await asOfOf(q))).map((s) => presentRedeemRequest(s, 'v0'))
    },
  )

  app.get(
    '/eth/v0/redeems/:idx',
    {
      schema: {
        tags: ['redemptions'],
        summary: 'One redeem request (v0 fields)',
        params: Idx,
        querystring: AsOnly,
        response: { 200: RedeemRequestV0, ...errorResponses(400, 404) },
      },
    },
    async (request) =>
      presentRedeemRequest(
        await one((request.params as { idx: number }).idx, request.query as AsOfParams),
        'v0',
      ),
  )

  app.get(
    '/eth/v0/redeems_info',
    {
      schema: {
        tags: ['redemptions'],
        summary: 'Redeem queue and withdrawal stack totals (v0)',
        querystring: AsOnly,
        response: { 200: RedeemManagerInfo, ...errorResponses(400) },
      },
    },
    info,
  )
}
