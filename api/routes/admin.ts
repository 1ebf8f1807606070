import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { DayRow } from '../../db/repos/days.ts'
import type { Repos } from '../../db/repos/index.ts'
import { ApiError } from '../errors.ts'
import { parseDate } from '../reporting/dates.ts'
import { BoundedInteger, errorResponses, MAX_INPUT_INTEGER, Nullable, StringEnum } from '../schemas.ts'

/** The shape of a YYYY-MM-DD date in the admin endpoints' inputs (the calendar is checked apart). */
export const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'

/** A day (one oracle report) as operators see it. */
export const AdminDaySchema = Type.Object({
  chain_id: Type.Integer(),
  date: Type.String({ format: 'date' }),
  report_epoch: Type.Integer(),
  status: StringEnum(['computed', 'pending', 'computing', 'failed']),
  wallets: Nullable('integer'),
  engine_version: Nullable('string'),
  /** the version of the records readers see (null before the first run completed) */
  version: Nullable('integer'),
  computed_at: Nullable('string', { format: 'date-time' }),
  started_at: Nullable('string', { format: 'date-time' }),
  duration_ms: Nullable('integer'),
  error: Nullable('string'),
})

/** Day row -> AdminDay. */
export function adminDayJson(day: DayRow) {
  return {
    chain_id: day.chain_id,
    date: day.date,
    report_epoch: Number(day.report_epoch),
    status: day.status,
    wallets: day.wallets,
    engine_version: day.engine_version,
    version: day.visible_version,
    computed_at: day.computed_at ? day.computed_at.toISOString() : null,
    started_at: day.started_at ? day.started_at.toISOString() : null,
    duration_ms: day.duration_ms,
    error: day.error,
  }
}

/** A real calendar date YYYY-MM-DD (the schema checks the shape; 2026-02-30 is refused here). */
function checkDate(name: string, value: string | undefined): string | undefined {
  return value === undefined ? undefined : parseDate(value, `querystring/${name}`)
}

/** Operator endpoints under /v1/admin (scope `admin`). */
export function adminRoutes(app: FastifyInstance, deps: { repos: Repos }) {
  const tags = ['admin']
  app.get(
    '/v1/admin/days',
    {
      onRequest: app.requireScope('admin'),
      schema: {
        tags,
        summary: 'The days (one per oracle report): computed, pending, computing or failed, with timings',
        description:
          'Every day of the chains the service follows (or of `chain_id`), in chain order, optionally within ' +
          '`from`..`to` (UTC dates of the report blocks, inclusive). `version` is the version of the records ' +
          'readers see; `error` is the last failure of a failed day.',
        security: [{ bearer: [] }],
        querystring: Type.Object({
          from: Type.Optional(Type.String({ pattern: DATE_PATTERN })),
          to: Type.Optional(Type.String({ pattern: DATE_PATTERN })),
          chain_id: Type.Optional(BoundedInteger({ minimum: 1, maximum: MAX_INPUT_INTEGER })),
        }),
        response: { 200: Type.Array(AdminDaySchema), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const q = request.query as { from?: string; to?: string; chain_id?: number }
      const from = checkDate('from', q.from)
      const to = checkDate('to', q.to)
      if (from && to && from > to) throw new ApiError('IR1000', `from ${from} is after to ${to}`)
      const range = { ...(from ? { from } : {}), ...(to ? { to } : {}) }
      const chains = q.chain_id === undefined ? await deps.repos.days.chainIds() : [q.chain_id]
      const days: DayRow[] = []
      for (const chainId of chains) days.push(...(await deps.repos.days.list(chainId, range)))
      return days.map(adminDayJson)
    },
  )
}
