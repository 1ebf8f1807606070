import type { FastifyReply } from 'fastify'
import type { FeeRecordRow, OperatorFeeRecordRow, ReportDay } from '../../../db/repos/reports.ts'
import { type FeeModel, formatUnits18, isOtherModelField } from '../../../engine/index.ts'
import { feeModelOf } from '../../fee-model-headers.ts'
import { FEE_AMOUNTS, FEE_RATES } from './schemas.ts'

/** v0 fee fields still populated after the V3 cutover: what is not a fee. */
const V0_KEPT_AFTER_CUTOVER = new Set(['balance_lseth', 'gross_rewards_eth', 'rewards_eth'])

/**
 * The interface's one explicit exception to the fee-model rule: the v0 platform and operator endpoints "stop
 * populating platform fees and rates" from the cutover (every fee and rate field null, a Link to v1).
 */
function stoppedInV0(version: 'v0' | 'v1', model: FeeModel): boolean {
  return version === 'v0' && model === 'v3'
}

/**
 * A fee record in a version: the one rule of the reward reads (a part of the other fee model is null, the
 * parts of the record's model sum to `fees_eth`; engine/fee-model-fields.ts).
 */
export function presentFeeRecord(
  row: FeeRecordRow | undefined,
  day: ReportDay,
  orgId: string,
  version: 'v0' | 'v1',
): Record<string, string | number | null> {
  const model = row?.fee_model ?? feeModelOf(day)
  const out: Record<string, string | number | null> = {
    oracle_report: day.report_epoch,
    date: day.date,
    org_id: orgId,
    fee_model: model,
    data_as_of: day.data_as_of.toISOString(),
    wallets: row?.wallets ?? 0,
  }
  const stopped = stoppedInV0(version, model)
  for (const f of FEE_AMOUNTS[version]) {
    const hidden = (stopped && !V0_KEPT_AFTER_CUTOVER.has(f)) || isOtherModelField(f, model)
    out[f] = hidden ? null : formatUnits18(BigInt(row?.[f] ?? 0))
  }
  for (const f of FEE_RATES[version])
    out[f] = stopped || isOtherModelField(f, model) ? null : (row?.[f] ?? '0')
  return out
}

/** A node operator's fee record in a version (v0 from the cutover: fee and rate null). */
export function presentOperator(
  row: OperatorFeeRecordRow,
  day: ReportDay,
  version: 'v0' | 'v1',
): Record<string, string | number | null> {
  const model = feeModelOf(day)
  const stopped = stoppedInV0(version, model)
  return {
    oracle_report: row.report_epoch,
    date: row.date,
    fee_model: model,
    operator_id: row.operator_id,
    active_validators: Number(row.active_validators),
    operator_fees_eth: stopped ? null : formatUnits18(BigInt(row.operator_fees_eth)),
    operator_fees_rate: stopped ? null : row.operator_fees_rate,
  }
}

/** From the cutover on, a v0 fee read links its v1 successor (where the V3 parts have their LsETH forms). */
export function linkSuccessor(reply: FastifyReply, day: ReportDay, path: string): void {
  if (feeModelOf(day) === 'v3') reply.header('link', `<${path}>; rel="successor-version"`)
}
