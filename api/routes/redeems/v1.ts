import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { presentRedeemRequest } from '../../../engine/index.ts'
import { ApiError } from '../../errors.ts'
import { BooleanLike, errorResponses, toBool } from '../../schemas.ts'
import { parseIds, parseOwners } from './inputs.ts'
import type { RedeemReads } from './reads.ts'
import {
  type AsOfParams,
  AsOfQuery,
  AsOnly,
  DisplayEth,
  Idx,
  RedeemManagerInfo,
  RedeemRequestV1,
} from './schemas.ts'

/** GET /eth/v1/redeems, /eth/v1/redeems/:idx and /eth/v1/redeems_info. */
export function redeemV1Routes(app: FastifyInstance, reads: RedeemReads) {
  const { asOfOf, states, one, info } = reads

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
}
