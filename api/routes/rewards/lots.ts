import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { computeLotRewards } from '../../../engine/index.ts'
import { ApiError } from '../../errors.ts'
import { parseDate } from '../../reporting/dates.ts'
import { answeredFromCache, setReportHeaders } from '../../reporting/etag.ts'
import { engineErrorToApi, rejectUnit } from '../../reporting/inputs.ts'
import { AsOfQuery } from '../../reporting/reads.ts'
import { errorResponses } from '../../schemas.ts'
import { checkCount, type RewardContext } from './context.ts'
import { LotRequest, LotsResponse } from './schemas.ts'

/** POST /eth/v1/rewards: the rewards accrued by lots of LsETH between report dates (on-the-fly engine math). */
export function lotRoutes(app: FastifyInstance, ctx: RewardContext) {
  const { rewards, tags, readsOf } = ctx
  app.post(
    '/eth/v1/rewards',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Rewards accrued by lots of LsETH between report dates (omnibus accounts)',
        description:
          'Per lot: start/end rate = post-fee rate of the last report on or before from / to (to defaults to the ' +
          'latest report); accrued = floor18(balance x end) - floor18(balance x start). At most 1000 lots.',
        body: Type.Array(LotRequest, { minItems: 1 }),
        querystring: Type.Object(AsOfQuery),
        response: { 200: LotsResponse, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      rejectUnit(request)
      const lots = request.body as { balance: string; from: string; to?: string }[]
      checkCount(lots, 'lots')
      lots.forEach((lot, i) => {
        parseDate(lot.from, `[${i}].from`)
        if (lot.to !== undefined) parseDate(lot.to, `[${i}].to`)
      })
      const [days, bounds] = await Promise.all([readsOf(request).all(), readsOf(request).bounds()])
      if (!bounds) throw new ApiError('IR4000', 'no computed report yet: lots need at least one')
      setReportHeaders(reply, bounds.latest)
      const rates = days.map((d) => ({
        date: d.date,
        report_epoch: d.report_epoch,
        conversion_rate: d.conversion_rate,
      }))
      const identity = rates.map((r) => `${r.date}|${r.report_epoch}|${r.conversion_rate}`)
      if (answeredFromCache(request, reply, [bounds.latest], { lots, identity })) return reply
      try {
        return computeLotRewards(rates, lots)
      } catch (err) {
        engineErrorToApi(err)
      }
    },
  )
}
