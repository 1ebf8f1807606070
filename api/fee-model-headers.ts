import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ReportDay } from '../db/repos/reports.ts'
import { type FeeModel, feeModelAt } from '../engine/index.ts'

/**
 * How a reporting answer names the fee models of the days it covers (README "For finance"): every record
 * names its `fee_model`; the answer's `X-Fee-Models` header lists the models of its days, and an answer whose
 * range crosses the 2026-05-01 cutover links the same read in the other record version (`Link`, rel
 * "alternate"), where the other model's parts are named.
 */

/** The fee model of a report day (by its block time). */
export function feeModelOf(day: Pick<ReportDay, 'block_time'>): FeeModel {
  return feeModelAt(Math.floor(day.block_time.getTime() / 1000))
}

/** The fee models of report days. */
export function feeModelsOf(days: readonly Pick<ReportDay, 'block_time'>[]): Set<FeeModel> {
  return new Set(days.map(feeModelOf))
}

/**
 * Sets `X-Fee-Models` (the models, comma separated) and, when the answer covers both, a `Link` to the read
 * in the other version (v0 <-> v1) when the service has that route (without `unit`, which v1 reads refuse).
 */
export function setFeeModelHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  models: ReadonlySet<FeeModel>,
): void {
  reply.header('x-fee-models', [...models].sort().join(', '))
  if (models.size < 2) return
  const route = request.routeOptions.url ?? ''
  const version = /^\/eth\/(v[01])\//.exec(route)?.[1]
  if (version === undefined) return
  const other = version === 'v1' ? 'v0' : 'v1'
  const otherRoute = route.replace(`/eth/${version}/`, `/eth/${other}/`)
  if (!request.server.hasRoute({ method: request.method, url: otherRoute })) return
  const url = new URL(request.url, 'http://x')
  url.pathname = url.pathname.replace(`/eth/${version}/`, `/eth/${other}/`)
  url.searchParams.delete('unit')
  reply.header('link', `<${url.pathname}${url.search}>; rel="alternate"; title="${other} records"`)
}
