import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../../db/repos/index.ts'
import { formatUnits18, parseUnits18 } from '../../engine/index.ts'
import { ImpersonateHeaders } from '../auth/impersonation.ts'
import { caller } from '../auth/plugin.ts'
import { ApiError } from '../errors.ts'
import { errorResponses } from '../schemas.ts'

const DiscountRateRecord = Type.Object({
  account_id: Type.String(),
  target_fee_rate: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  effective_from: Type.String({
    format: 'date-time',
    description: 'chain time from which the rate applies: reports after it use it',
  }),
})

/** The history of an account's target fee rates (the POST that adds one is in routes/platform/discount-rate.ts). */
export function discountRoutes(app: FastifyInstance, deps: { repos: Repos }) {
  const { repos } = deps
  app.get(
    '/v0/platform/accounts/:idOrKey/discount_rate',
    {
      onRequest: app.requireScope('read:platform'),
      schema: {
        tags: ['platform'],
        headers: ImpersonateHeaders,
        summary: "An account's target fee rates, oldest first (the last one is in force)",
        params: Type.Object({ idOrKey: Type.String({ minLength: 1, maxLength: 256 }) }),
        response: { 200: Type.Array(DiscountRateRecord), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { idOrKey } = request.params as { idOrKey: string }
      const account = await repos.accounts.findByIdOrKey(caller(request).orgId, idOrKey)
      if (!account) throw new ApiError('IR3000', `account ${JSON.stringify(idOrKey)} not found`)
      return (await repos.reports.discountHistory(account.id)).map((row) => ({
        account_id: row.account_id,
        target_fee_rate: formatUnits18(parseUnits18(row.target_fee_rate)),
        created_at: row.created_at.toISOString(),
        effective_from: row.effective_from.toISOString(),
      }))
    },
  )
}
