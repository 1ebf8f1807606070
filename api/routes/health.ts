import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { type Db, migrationsUpToDate } from '../../db/index.ts'
import { ApiError } from '../errors.ts'
import { errorResponses } from '../schemas.ts'

/** GET /health (liveness) and GET /ready (database reachable, migrations applied). Public. */
export function healthRoutes(app: FastifyInstance, deps: { db: Db }) {
  app.get(
    '/health',
    {
      schema: {
        tags: ['ops'],
        summary: 'Liveness',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  )
  app.get(
    '/ready',
    {
      schema: {
        tags: ['ops'],
        summary: 'Readiness: database reachable and migrations applied',
        response: { 200: Type.Object({ status: Type.Literal('ready') }), ...errorResponses(503) },
      },
    },
    async () => {
      let ok = false
      try {
        await deps.db.raw('select 1')
        ok = await migrationsUpToDate(deps.db)
      } catch (err) {
        throw new ApiError('IR5030', 'database unreachable', { cause: err })
      }
      if (!ok) throw new ApiError('IR5030', 'database migrations pending: run lsreport migrate')
      return { status: 'ready' as const }
    },
  )
}
