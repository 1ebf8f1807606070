import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../../db/repos/index.ts'
import { parseDate, reportOr404 } from '../reporting/dates.ts'
import { setReportHeaders } from '../reporting/etag.ts'
import { readsFor } from '../reporting/reads.ts'
import { errorResponses, Nullable, StringEnum } from '../schemas.ts'

/**
 * The restatement log of a date's report (README "For finance"): every version that was visible, why it was
 * made and when it was visible. A read `as_of` an instant answers with the version visible then.
 */

const Version = Type.Object({
  version: Type.Integer(),
  content_hash: Type.String({
    description:
      "sha-256 Merkle root of the version's wallet records: the same records give the same hash, however the day " +
      'was computed (shards, runner, database)',
  }),
  engine_version: Type.String(),
  reason: StringEnum([
    'first',
    'reorg',
    'predecessor restated',
    'discount',
    'fee schedule',
    'engine upgrade',
    'recompute requested',
  ]),
  previous_version: Nullable('integer'),
  visible_from: Type.String({ description: 'RFC 3339 (ms): reads as_of this instant or later see it' }),
  visible_until: Nullable('string', { description: 'when the next version replaced it (null: visible now)' }),
  current: Type.Boolean(),
})

const Versions = Type.Object({
  date: Type.String(),
  oracle_report: Type.String(),
  versions: Type.Array(Version),
})

/** `GET /v1/reports/{date}/versions`. */
export function reportVersionRoutes(app: FastifyInstance, deps: { repos: Repos }) {
  const { repos } = deps
  app.get(
    '/v1/reports/:date/versions',
    {
      onRequest: app.requireScope('read:eth-rewards'),
      schema: {
        tags: ['rewards'],
        summary: "The versions of a date's report: the restatement log",
        description:
          'Every version of the report answering for the date (the latest report of the date), oldest first: ' +
          'its content hash, engine version, why it was made and when it was visible. Reporting reads take ' +
          '`as_of` to answer as of an instant.',
        params: Type.Object({ date: Type.String({ description: 'YYYY-MM-DD' }) }),
        response: { 200: Versions, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { date } = request.params as { date: string }
      parseDate(date, 'date')
      const day = await reportOr404(readsFor(request, repos), date)
      setReportHeaders(reply, day)
      reply.header('cache-control', 'no-cache')
      const versions = await repos.reports.versions(day)
      return {
        date: day.date,
        oracle_report: day.report_epoch,
        versions: versions.map((v) => ({
          version: v.version,
          content_hash: v.content_hash,
          engine_version: v.engine_version,
          reason: v.reason,
          previous_version: v.previous_version,
          visible_from: v.visible_from.toISOString(),
          visible_until: v.visible_until?.toISOString() ?? null,
          current: v.visible_until === null,
        })),
      }
    },
  )
}
