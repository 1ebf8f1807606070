import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ReportDay } from '../../../db/repos/reports.ts'
import type { Granularity } from '../../../engine/index.ts'
import { feeModelsOf, setFeeModelHeaders } from '../../fee-model-headers.ts'
import type { RecordVersion, Unit } from '../../record-fields.ts'
import type { ReportReads } from '../../report-cache.ts'
import { wantsCsv } from '../../reporting/csv.ts'
import { answeredFromCache, setReportHeaders } from '../../reporting/etag.ts'
import { readingOrg } from '../../reporting/reads.ts'
import { PERIOD_HEAD_FIELDS, periodFields } from './rollup-presenting.ts'

/** What the wallet, account and organization summaries share: their request, reports, cache and CSV header. */

/** What every summary starts with: the request's id or key, its reading org, range, currency and group_by. */
export function summaryRequest(request: FastifyRequest) {
  const { idOrKey } = (request.params ?? {}) as { idOrKey?: string }
  const query = request.query as { from?: string; to?: string; group_by?: Granularity; currency?: string }
  return {
    idOrKey: idOrKey ?? '',
    query,
    orgId: readingOrg(request),
    csv: wantsCsv(request),
    groupBy: query.group_by,
  }
}

/**
 * The reports of a summary's range preceded by the report before its first one (when there is one): the
 * opening price of the first period is that report's.
 */
export async function withReportBefore(reads: ReportReads, days: readonly ReportDay[]): Promise<ReportDay[]> {
  const first = days[0]
  if (first === undefined) return []
  const before = (await reads.all()).filter((d) => d.date < first.date).at(-1)
  return before ? [before, ...days] : [...days]
}

/**
 * Report and fee model headers of a summary's days (set before the answer memo is looked in: a kept answer
 * carries them too); true once answered from it (304 on a matching If-None-Match, or the kept bytes). The
 * report before the range is an input (its price is the opening balance's).
 */
export function summaryAnsweredFromCache(
  request: FastifyRequest,
  reply: FastifyReply,
  days: readonly ReportDay[],
  priced: readonly ReportDay[],
  inputs: Record<string, unknown>,
): boolean {
  setReportHeaders(reply, days)
  setFeeModelHeaders(request, reply, feeModelsOf(days))
  const before = priced.length > days.length ? priced[0] : undefined
  const opening = before ? `${before.report_epoch}:${before.visible_version}` : null
  return answeredFromCache(request, reply, days, { ...inputs, opening })
}

/** The CSV header of rolled periods (with `who`: the column naming the wallet or account of each row). */
export function periodCsvFields(
  version: RecordVersion,
  unit: Unit,
  currency: string | undefined,
  who?: string,
) {
  const amounts = periodFields(version, unit, currency as 'usd' | 'eur' | undefined)
  return [...PERIOD_HEAD_FIELDS, ...(who ? [who] : []), ...amounts]
}
