import type { Db } from '../../db/index.ts'
import { type DayRow, restatementReason } from '../../db/repos/days.ts'
import { createRepos, inTransaction } from '../../db/repos/index.ts'
import type { DayKey, MintsAndBurns } from '../../db/repos/records.ts'
import {
  activeValidatorsPerOperator,
  computeProtocolRecord,
  decodeFeeSummary,
  ENGINE_VERSION,
  type EncodedFeeSummary,
  EngineError,
  type FeeTotals,
  feeTotalsRows,
  mergeFeeSummaries,
  operatorFeeRows,
  reconcileReport,
} from '../../engine/index.ts'
import { dayFinalizedEvent } from '../webhooks/events.ts'
import { CONTENT_HASH_SCHEME, contentHashOfLines, dayContentHash } from './content-hash.ts'
import { DayDataError, DayNotReadyError } from './errors.ts'
import { type DayInputs, describeReport } from './inputs.ts'
import { unreconciledDayError } from './reconciliation-diagnosis.ts'

/** The finalization job's payload. */
export interface FinalizeJob {
  chainId: number
  epoch: string
  version: number
  shards: number
}

/**
 * How a finalization ended: a version published (`computed`), records equal to the visible version's
 * (`unchanged`: nothing published, nothing announced), or a newer run replaced this one.
 */
export type FinalizeOutcome =
  | { status: 'computed'; wallets: number; content_hash: string }
  | { status: 'unchanged'; wallets: number; content_hash: string; visible_version: number }
  | { status: 'superseded' }

/**
 * The content hash of a day's visible version under this code's scheme (`CONTENT_HASH_SCHEME`), with that
 * version: as stored, or for a version published under an older scheme (hashed by its shard layout) its
 * records read back and hashed (once per recompute of such a day: the upgrade itself publishes nothing).
 */
async function visibleContentHash(
  db: Db,
  day: DayRow,
): Promise<{ version: number; content_hash: string } | undefined> {
  if (day.visible_version === null || day.content_hash === null) return undefined
  if (day.content_hash_scheme === CONTENT_HASH_SCHEME) {
    return { version: day.visible_version, content_hash: day.content_hash }
  }
  const key: DayKey = { chainId: day.chain_id, epoch: String(day.report_epoch), version: day.visible_version }
  const out = await createRepos(db).records.openContentLines(key)
  try {
    return { version: day.visible_version, content_hash: await contentHashOfLines(out.texts) }
  } finally {
    await out.close()
  }
}

function engineStep<T>(inputs: DayInputs, step: () => T): T {
  try {
    return step()
  } catch (err) {
    if (err instanceof EngineError) {
      throw new DayDataError(`${describeReport(inputs.day)}: ${err.message}`, { cause: err })
    }
    throw err
  }
}

/**
 * Reconciles the day's records with its report (its `violations` empty when they do): every share before the
 * report transaction belongs to a holder, so the holders' records must add up.
 */
function reconcileDay(
  inputs: DayInputs,
  all: FeeTotals & { wallets: number; balance_lseth: bigint },
  ownFlows: MintsAndBurns,
) {
  const { report, ctx } = inputs
  // every share before the report transaction belongs to a holder: the holders' records must add up. Their
  // balances are at the end of the report transaction: its own mints and burns undone give the shares before
  const reconciliation = engineStep(inputs, () =>
    reconcileReport(
      ctx,
      {
        holders: all.wallets,
        shares: all.balance_lseth - BigInt(ownFlows.mints) + BigInt(ownFlows.burns),
        gross_rewards: all.gross_rewards_eth,
        fees: all.fees_eth,
      },
      {
        supply_before: ctx.supply - BigInt(ownFlows.mints) + BigInt(ownFlows.burns),
        fee_shares: BigInt(report.fee_shares),
        supply_after_fee_mint: BigInt(report.fee_mint_supply_after ?? report.total_supply),
        reported_increase:
          BigInt(report.trace_rewards) +
          BigInt(report.trace_pulled_coverage_funds) +
          BigInt(report.trace_pulled_redeem_manager_exceeding_eth),
      },
    ),
  )
  return reconciliation
}

/** The operator fee records of a day: one per operator, and the unallocated rest when there is one. */
function operatorRecordRows(operators: ReturnType<typeof operatorFeeRows>, date: string) {
  return [
    ...operators.operators.map((o) => ({
      operator_id: o.operator_id,
      date,
      active_validators: o.active_validators,
      operator_fees_eth: o.operator_fees_eth,
      operator_fees_rate: o.operator_fees_rate,
      engine_version: ENGINE_VERSION,
    })),
    ...(operators.unallocated_eth > 0n
      ? [
          {
            operator_id: 'unallocated',
            date,
            active_validators: 0n,
            operator_fees_eth: operators.unallocated_eth,
            operator_fees_rate: '0',
            engine_version: ENGINE_VERSION,
          },
        ]
      : []),
  ]
}

/**
 * After every shard of a run succeeded: reads what the finalization needs besides the day's inputs
 * (`inputs`, with the reports before the day) in one statement, then writes the account records (sums of their
 * wallets), the protocol record, the platform / originator / operator fee records, and makes the run's
 * version visible, all in one transaction; then deletes the day's hidden versions (a day's first run has
 * none). A run whose records equal the visible version's (the content hash, `content-hash.ts`, and the
 * day-level rows) publishes nothing: the day keeps its visible version, no version is logged, no
 * `day.finalized` is emitted, and the run's records are deleted. A run that a newer one replaced does nothing.
 */
export async function finalizeDay(db: Db, inputs: DayInputs, job: FinalizeJob): Promise<FinalizeOutcome> {
  const repos = createRepos(db)
  const key: DayKey = { chainId: job.chainId, epoch: job.epoch, version: job.version }
  const { report, ctx } = inputs
  const {
    shards,
    operators: funded,
    flows,
    ownFlows,
  } = await repos.records.finalizationReads(
    key,
    { block: String(report.block_number), logIndex: report.log_index, txIndex: report.tx_index },
    inputs.window,
  )
  if (shards.length !== job.shards) {
    throw new DayNotReadyError(
      `${describeReport(inputs.day)}: ${shards.length} of ${job.shards} shards written; retried`,
    )
  }
  // a report before River 1.0.0 (report_shape 'legacy') carried no stopped validators: none had exited
  const stoppedPerOperator = report.stopped_validator_count_per_operator ?? []
  const summary = mergeFeeSummaries(
    ...shards.map((s) => decodeFeeSummary(s.fee_summary as EncodedFeeSummary)),
  )
  const reconciliation = reconcileDay(inputs, summary.all, ownFlows)
  if (reconciliation.violations.length > 0) {
    throw await unreconciledDayError(db, inputs, key, reconciliation.violations, flows)
  }
  const protocol = engineStep(inputs, () =>
    computeProtocolRecord({
      oracle_report: String(report.epoch),
      timestamp: ctx.timestamp,
      rewards: BigInt(report.trace_rewards),
      global_fee_bps: report.global_fee_bps,
      fee_shares_minted: BigInt(report.fee_shares),
      underlying: ctx.underlying,
      supply: ctx.supply,
      mints_lseth: BigInt(flows.mints),
      burns_lseth: BigInt(flows.burns),
      validators_count: report.validators_count,
      stopped_validator_count_per_operator: stoppedPerOperator,
      previous_reports: inputs.history.toReversed().map((r) => ({
        timestamp: Math.floor(r.block_time.getTime() / 1000),
        underlying: BigInt(r.total_underlying_supply),
        supply: BigInt(r.total_supply),
      })),
    }),
  )
  const operators = engineStep(inputs, () =>
    operatorFeeRows(
      summary.all,
      activeValidatorsPerOperator(
        funded.map((o) => ({ operator_id: String(o.operator_index), funded_validators: o.funded })),
        stoppedPerOperator,
      ),
      ctx,
    ),
  )
  const feeRows = (kind: string, groups: Record<string, FeeTotals>) =>
    feeTotalsRows(groups, ctx).map((row) => ({
      ...row,
      kind,
      date: inputs.day.date,
      fee_model: ctx.fee_model,
      engine_version: ENGINE_VERSION,
    }))
  const contentHash = dayContentHash(shards)
  const wallets = shards.reduce((n, s) => n + s.wallets, 0)
  const { violations: _none, ...residuals } = reconciliation
  // what the run is compared with (read before the transaction: an older scheme's version is read back)
  const visible = await visibleContentHash(db, inputs.day)
  const outcome = await inTransaction(db, async (r): Promise<FinalizeOutcome> => {
    const locked = await r.days.lock(job.chainId, job.epoch)
    if (!locked || locked.computing_version !== job.version) return { status: 'superseded' }
    const durationMs = locked.started_at ? Date.now() - locked.started_at.getTime() : 0
    await r.records.writeDayLevel(key, {
      engineVersion: ENGINE_VERSION,
      protocol: {
        date: inputs.day.date,
        block_time: report.block_time,
        block_number: String(report.block_number),
        total_protocol_mints_lseth: protocol.total_protocol_mints_lseth,
        total_protocol_burns_lseth: protocol.total_protocol_burns_lseth,
        total_protocol_active_keys_count: protocol.total_protocol_active_keys_count,
        rewards_eth: protocol.rewards_eth,
        gross_fee_rate: protocol.gross_fee_rate,
        gross_fee_lseth: protocol.gross_fee_lseth,
        conversion_rate: protocol.conversion_rate,
        total_lseth_supply: protocol.total_lseth_supply,
        total_underlying_eth: ctx.underlying,
        a_srr_7d: protocol.a_srr_7d,
        engine_version: ENGINE_VERSION,
      },
      fees: [
        ...feeRows('all', { '': summary.all }),
        ...feeRows('platform', summary.platforms),
        ...feeRows('originator', summary.originators),
      ],
      reconciliation: residuals,
      operators: operatorRecordRows(operators, inputs.day.date),
    })
    // the same records as the visible version (its wallet records by content hash, its day-level records row
    // for row): nothing is published nor announced, and nothing after the day is restated
    if (
      locked.visible_version !== null &&
      visible?.version === locked.visible_version &&
      visible.content_hash === contentHash &&
      (await r.records.sameDayLevel(key, locked.visible_version))
    ) {
      await r.days.keepVisible(job.chainId, job.epoch, {
        version: job.version,
        basedOnHash: inputs.previousHash,
        durationMs,
      })
      return {
        status: 'unchanged',
        wallets,
        content_hash: locked.content_hash ?? contentHash,
        visible_version: locked.visible_version,
      }
    }
    await r.days.finishRun(job.chainId, job.epoch, {
      version: job.version,
      wallets,
      engineVersion: ENGINE_VERSION,
      contentHash,
      contentHashScheme: CONTENT_HASH_SCHEME,
      basedOnHash: inputs.previousHash,
      durationMs,
      reason: restatementReason(locked),
      previousVersion: locked.visible_version,
    })
    // webhooks: every published version (a first one, or a recompute whose records changed) is announced
    // (same transaction)
    await r.webhooks.emit(
      dayFinalizedEvent(locked, job, inputs.day.date, contentHash, wallets, restatementReason(locked)),
    )
    return { status: 'computed', wallets, content_hash: contentHash }
  })
  // a day's first run (version 1) has no other version: a later run of the day would have replaced it (its
  // finalization then finds the day's computing version changed and writes nothing), so nothing is hidden.
  // An unchanged run's own records are hidden now
  if (outcome.status !== 'superseded' && job.version > 1) {
    await repos.days.deleteHiddenVersions(job.chainId, job.epoch)
  }
  return outcome
}
