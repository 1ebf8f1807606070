import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FEE_AMOUNT_COLUMNS } from '../../../db/records/columns.ts'
import type { FeeKind } from '../../../db/repos/reports.ts'
import { feeModelOf, setFeeModelHeaders } from '../../fee-model-headers.ts'
import { withFiat } from '../../fiat-view.ts'
import { presentProtocolRecord } from '../../protocol-presentation.ts'
import { parseDate, reportOr404 } from '../../reporting/dates.ts'
import { answeredFromCache, setReportHeaders } from '../../reporting/etag.ts'
import { rejectUnit } from '../../reporting/inputs.ts'
import { readingOrg } from '../../reporting/reads.ts'
import type { FeeContext } from './context.ts'
import { linkSuccessor, presentFeeRecord, presentOperator } from './presenting.ts'
import { FEE_SOURCES, OPERATOR_SOURCES, PROTOCOL_SOURCES } from './schemas.ts'

/**
 * GET /eth/{v1,v0}/{platforms,originators}/:date: the reading organization's own fee record of the date's
 * report (other organizations' fees are never shown).
 */
export async function orgFees(
  ctx: FeeContext,
  request: FastifyRequest,
  reply: FastifyReply,
  kind: Exclude<FeeKind, 'all'>,
  version: 'v0' | 'v1',
) {
  const { repos, readsOf, priceOf } = ctx
  if (version === 'v1') rejectUnit(request)
  const { date } = request.params as { date: string }
  parseDate(date, 'date')
  const orgId = readingOrg(request)
  const day = await reportOr404(readsOf(request), date)
  setReportHeaders(reply, day)
  setFeeModelHeaders(request, reply, new Set([feeModelOf(day)]))
  if (version === 'v0') linkSuccessor(reply, day, `/eth/v1/${kind}s/${date}`)
  if (answeredFromCache(request, reply, [day], { orgId })) return reply
  const row = await readsOf(request).cached([day], `fee:${kind}:${orgId}`, () =>
    repos.reports.feeRecord(day, kind, orgId),
  )
  const presented = presentFeeRecord(row, day, orgId, version)
  const price = await priceOf(request, day)
  if (!price) return presented
  const amount = (source: string) => BigInt(row?.[source as (typeof FEE_AMOUNT_COLUMNS)[number]] ?? 0)
  return withFiat(presented, amount, FEE_SOURCES, price.price, price.currency)
}

/** GET /eth/{v1,v0}/operators/:date: the day's operator fees split by active validators. */
export async function operatorFees(
  ctx: FeeContext,
  request: FastifyRequest,
  reply: FastifyReply,
  version: 'v0' | 'v1',
) {
  const { repos, readsOf, priceOf } = ctx
  if (version === 'v1') rejectUnit(request)
  const { date } = request.params as { date: string }
  parseDate(date, 'date')
  const day = await reportOr404(readsOf(request), date)
  setReportHeaders(reply, day)
  setFeeModelHeaders(request, reply, new Set([feeModelOf(day)]))
  if (version === 'v0') linkSuccessor(reply, day, `/eth/v1/operators/${date}`)
  if (answeredFromCache(request, reply, [day], {})) return reply
  const rows = await readsOf(request).cached([day], 'operators', () => repos.reports.operatorFeeRecords(day))
  const price = await priceOf(request, day)
  return rows.map((row) => {
    const presented = presentOperator(row, day, version)
    if (!price) return presented
    const amount = () => BigInt(row.operator_fees_eth)
    return withFiat(presented, amount, OPERATOR_SOURCES, price.price, price.currency)
  })
}

/** GET /eth/v0/protocol/:date: the public protocol record of the date's report (empty when none stored). */
export async function protocolRecord(ctx: FeeContext, request: FastifyRequest, reply: FastifyReply) {
  const { repos, readsOf, priceOf } = ctx
  const { date } = request.params as { date: string }
  parseDate(date, 'date')
  const day = await reportOr404(readsOf(request), date)
  setReportHeaders(reply, day)
  if (answeredFromCache(request, reply, [day], {})) return reply
  const row = await readsOf(request).cached([day], 'protocol', () => repos.reports.protocolRecord(day))
  if (!row) return []
  const price = await priceOf(request, day)
  const presented = [
    presentProtocolRecord({
      oracle_report: row.report_epoch,
      date: row.block_time.toISOString().replace('.000Z', 'Z'),
      total_protocol_mints_lseth: BigInt(row.total_protocol_mints_lseth),
      total_protocol_burns_lseth: BigInt(row.total_protocol_burns_lseth),
      total_protocol_active_keys_count: row.total_protocol_active_keys_count,
      rewards_eth: BigInt(row.rewards_eth),
      gross_fee_rate: row.gross_fee_rate,
      gross_fee_lseth: BigInt(row.gross_fee_lseth),
      conversion_rate: row.conversion_rate,
      total_lseth_supply: BigInt(row.total_lseth_supply),
      a_srr_7d: row.a_srr_7d,
    }),
  ]
  if (!price) return presented
  const amount = () => BigInt(row.rewards_eth)
  return presented.map((p) => withFiat(p, amount, PROTOCOL_SOURCES, price.price, price.currency))
}
