import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { prepareBackfill } from '../../db/backfill.ts'
import type { Db } from '../../db/index.ts'
import { RECOMPUTE_REASONS, type RecomputeReason } from '../../db/repos/days.ts'
import type { Repos } from '../../db/repos/index.ts'
import { ApiError } from '../errors.ts'
import { parseDate } from '../reporting/dates.ts'
import { BoundedInteger, errorResponses, MAX_INPUT_INTEGER, StringEnum } from '../schemas.ts'
import { DATE_PATTERN } from './admin.ts'

const DateRangeSchema = Type.Object({ from: Type.String(), to: Type.String() })

/** What POST /v1/admin/backfill found and changed (jobs/days/backfill.ts `BackfillStart`). */
const BackfillStartSchema = Type.Object({
  chain_id: Type.Integer(),
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  days: Type.Integer({ description: 'days (oracle reports) in the range' }),
  retried: Type.Integer({ description: 'failed days sent back to pending (in the range or before it)' }),
  recomputed: Type.Integer({ description: 'days of the range sent back to pending by `recompute`' }),
  ingested: DateRangeSchema,
})

/**
 * POST /v1/admin/backfill (scope `admin`): `lsreport backfill` through the running service. Sends the range's
 * failed days (and, with `recompute`, every day of it) back to pending; the service's own day jobs (or its
 * workers) compute them in chain order, as their scheduler finds them. The answer comes before the days are
 * computed: GET /v1/admin/days shows their progress, GET /v1/reports/{date}/versions the versions made. On the
 * embedded default, where one process holds the database, this is how a restatement runs while `lsreport up`
 * serves (the CLI's `backfill` calls it when the data directory is in use).
 */
export function adminBackfillRoutes(app: FastifyInstance, deps: { db: Db; repos: Repos }) {
  app.post(
    '/v1/admin/backfill',
    {
      onRequest: app.requireScope('admin'),
      schema: {
        tags: ['admin'],
        summary:
          'Backfill or recompute a range of days in the running service (answers before they are computed)',
        description:
          'The days of `from`..`to` (UTC dates of the report blocks) that failed, and with `recompute` every day ' +
          'of the range, go back to pending; the day jobs compute them in chain order. A recompute publishes a ' +
          'new version of a day only when its records change (`reason` is logged with it). `chain_id` is needed ' +
          'only when the service follows more than one chain.',
        security: [{ bearer: [] }],
        body: Type.Object(
          {
            from: Type.String({ pattern: DATE_PATTERN }),
            to: Type.String({ pattern: DATE_PATTERN }),
            recompute: Type.Optional(Type.Boolean({ default: false })),
            reason: Type.Optional(StringEnum([...RECOMPUTE_REASONS])),
            chain_id: Type.Optional(BoundedInteger({ minimum: 1, maximum: MAX_INPUT_INTEGER })),
          },
          { additionalProperties: false },
        ),
        response: { 202: BackfillStartSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const body = request.body as {
        from: string
        to: string
        recompute?: boolean
        reason?: RecomputeReason
        chain_id?: number
      }
      if (body.reason !== undefined && body.recompute !== true) {
        throw new ApiError('IR1000', 'reason goes with recompute: true')
      }
      const from = parseDate(body.from, 'from')
      const to = parseDate(body.to, 'to')
      if (from > to) throw new ApiError('IR1000', `from ${from} is after to ${to}`)
      const chainId = body.chain_id ?? (await onlyChain(deps.repos))
      const start = await prepareBackfill(
        deps.db,
        chainId,
        { from, to },
        { recompute: body.recompute === true, ...(body.reason ? { reason: body.reason } : {}), toName: 'to' },
      )
      request.log.info({ chain_id: chainId, ...start }, 'backfill started through the API')
      return reply.code(202).send({ chain_id: chainId, ...start })
    },
  )
}

/** The one chain the service follows; a 400 naming them when there are several (or none yet). */
export async function onlyChain(repos: Repos): Promise<number> {
  const chains = await repos.days.chainIds()
  if (chains.length === 1) return chains[0] as number
  if (chains.length === 0) throw new ApiError('IR1000', 'no oracle report has been ingested yet')
  throw new ApiError('IR1000', `chain_id is needed: the service follows chains ${chains.join(', ')}`)
}
