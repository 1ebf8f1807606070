import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import {
  formatRatio,
  formatUnits18,
  InvalidInputError,
  parseUnits18,
  validateTargetFeeRate,
} from '../../../engine/index.ts'
import { ImpersonateHeaders } from '../../auth/impersonation.ts'
import { caller } from '../../auth/plugin.ts'
import { ApiError } from '../../errors.ts'
import { AccountParams, errorResponses } from '../../schemas.ts'
import { type PlatformRouteDeps, platformRouteOptions } from './context.ts'

/** A plain decimal as a string, e.g. "0.08" (at most 20 integer and 30 fraction digits). */
const DECIMAL_PATTERN = '^[0-9]{1,20}(\\.[0-9]{1,30})?$'

/** POST /v0/platform/accounts/{idOrKey}/discount_rate: an account's target fee rate (history kept). */
export function discountRateRoutes(app: FastifyInstance, { platform, grossFeeBps }: PlatformRouteDeps) {
  const { write, tags } = platformRouteOptions(app)

  app.post(
    '/v0/platform/accounts/:idOrKey/discount_rate',
    {
      ...write,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: 'Set the target fee rate of an account',
        params: AccountParams,
        body: Type.Object({
          target_fee_rate: Type.Union([
            Type.String({ pattern: DECIMAL_PATTERN, description: 'a plain decimal, e.g. "0.08"' }),
            Type.Number({ minimum: 0, maximum: 1 }),
          ]),
        }),
        response: {
          200: Type.Object({
            account_id: Type.String(),
            target_fee_rate: Type.String(),
            created_at: Type.String(),
          }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const { idOrKey } = request.params as { idOrKey: string }
      const { target_fee_rate } = request.body as { target_fee_rate: number | string }
      const bps = (await grossFeeBps()) ?? 10_000
      let rate: string
      try {
        rate = validateTargetFeeRate(
          typeof target_fee_rate === 'number' ? String(target_fee_rate) : target_fee_rate,
          bps,
        )
      } catch (err) {
        if (!(err instanceof InvalidInputError)) throw err
        throw new ApiError(
          'IR3200',
          `target_fee_rate must be a decimal (at most 18 places) between 0 and the gross protocol fee rate ${formatRatio(BigInt(bps), 10_000n)}`,
        )
      }
      const auth = caller(request)
      const row = await platform.addDiscountRate(auth.orgId, idOrKey, rate, auth.clientId)
      return {
        account_id: row.account_id,
        target_fee_rate: formatUnits18(parseUnits18(row.target_fee_rate)),
        created_at: row.created_at.toISOString(),
      }
    },
  )
}
