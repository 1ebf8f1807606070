import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { errorResponses } from '../../schemas.ts'
import { AsOf } from '../rewards/schemas.ts'
import type { FeeContext } from './context.ts'
import { operatorFees, orgFees } from './handlers.ts'
import {
  DateParams,
  feeDescription,
  feeRecordSchema,
  ImpersonateHeaders,
  OperatorRecordSchema,
} from './schemas.ts'

/** GET /eth/v1/platforms/:date, /eth/v1/originators/:date and /eth/v1/operators/:date (V3 fields). */
export function feeV1Routes(app: FastifyInstance, ctx: FeeContext) {
  const { rewards, tags } = ctx

  app.get(
    '/eth/v1/platforms/:date',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Platform fees and rates of a date (V3 fields), for the org owning the accounts',
        description: feeDescription('platform'),
        params: DateParams,
        querystring: AsOf,
        headers: ImpersonateHeaders,
        response: { 200: feeRecordSchema('v1'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => orgFees(ctx, request, reply, 'platform', 'v1'),
  )
  app.get(
    '/eth/v1/originators/:date',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Originator fees and rates of a date (V3 fields), for the org that added the wallets',
        description: feeDescription('originator'),
        params: DateParams,
        querystring: AsOf,
        headers: ImpersonateHeaders,
        response: { 200: feeRecordSchema('v1'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => orgFees(ctx, request, reply, 'originator', 'v1'),
  )
  app.get(
    '/eth/v1/operators/:date',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Node operator fees of a date: the operator share split by active validators',
        params: DateParams,
        querystring: AsOf,
        response: { 200: Type.Array(OperatorRecordSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => operatorFees(ctx, request, reply, 'v1'),
  )
}
