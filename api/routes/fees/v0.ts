import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { V3_CUTOVER_ISO } from '../../../engine/index.ts'
import { KEPT_ANSWERS } from '../../reporting/etag.ts'
import { errorResponses } from '../../schemas.ts'
import { AsOf } from '../rewards/schemas.ts'
import type { FeeContext } from './context.ts'
import { operatorFees, orgFees, protocolRecord } from './handlers.ts'
import {
  DateParams,
  feeDescription,
  feeRecordSchema,
  ImpersonateHeaders,
  OperatorRecordSchema,
  ProtocolRecordSchema,
} from './schemas.ts'

/** What a v0 fee read adds to its description: the cutover stops it. */
const v0Note =
  ` From ${V3_CUTOVER_ISO} every fee and rate field is null (the interface: use v1), with a Link to the v1 ` +
  'endpoint; before it, parts of the V3 model are null.'

/** GET /eth/v0/platforms/:date, /eth/v0/operators/:date (history) and the public /eth/v0/protocol/:date. */
export function feeV0Routes(app: FastifyInstance, ctx: FeeContext) {
  const { rewards, tags } = ctx

  app.get(
    '/eth/v0/platforms/:date',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Platform fees and rates of a date (v0 fields; history through 2026-04-30)',
        description: feeDescription('platform') + v0Note,
        params: DateParams,
        querystring: AsOf,
        headers: ImpersonateHeaders,
        response: { 200: feeRecordSchema('v0'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => orgFees(ctx, request, reply, 'platform', 'v0'),
  )
  app.get(
    '/eth/v0/operators/:date',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Node operator fees of a date (v0; history through 2026-04-30)',
        description: `Operators and their active validators.${v0Note}`,
        params: DateParams,
        querystring: AsOf,
        response: { 200: Type.Array(OperatorRecordSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => operatorFees(ctx, request, reply, 'v0'),
  )

  app.get(
    '/eth/v0/protocol/:date',
    {
      ...KEPT_ANSWERS,
      schema: {
        tags: ['protocol'],
        summary: 'Protocol record of a date (public): rewards, fee, rate, supply, a_srr_7d',
        params: DateParams,
        querystring: AsOf,
        response: { 200: Type.Array(ProtocolRecordSchema), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => protocolRecord(ctx, request, reply),
  )
}
