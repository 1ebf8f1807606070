import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { presentRedeemRequest } from '../../../engine/index.ts'
import { errorResponses } from '../../schemas.ts'
import { parseOwners } from './inputs.ts'
import type { RedeemReads } from './reads.ts'
import { type AsOfParams, AsOfQuery, AsOnly, Idx, RedeemManagerInfo, RedeemRequestV0 } from './schemas.ts'

/** GET /eth/v0/redeems, /eth/v0/redeems/:idx and /eth/v0/redeems_info (the v0 fields). */
export function redeemV0Routes(app: FastifyInstance, reads: RedeemReads) {
  const { asOfOf, states, one, info } = reads

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
