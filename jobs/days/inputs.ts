import type { Queryable } from '../../db/index.ts'
import type { DayRow } from '../../db/repos/days.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { ChainPosition, DayKey, StoredReport } from '../../db/repos/records.ts'
import {
  EngineError,
  parseFeeSchedules,
  prepareReport,
  type ReportContext,
  selectFeeSchedule,
} from '../../engine/index.ts'
import { DayDataError, DayNotReadyError } from './errors.ts'

/** What every step of a day reads first: the report, its predecessor and the engine's report constants. */
export interface DayInputs {
  day: DayRow
  report: StoredReport
  /** The report before it (undefined for the chain's first report). */
  previous: StoredReport | undefined
  /** The predecessor day's visible records (null for the first report). */
  previousKey: DayKey | null
  /** The predecessor day's content hash (what this day is based on). */
  previousHash: string | null
  ctx: ReportContext
  blockTime: Date
  /**
   * This report's period: transfers at positions (after, upTo], from the previous report's transaction
   * (excluded: the predecessor's balances hold it) to this report's (included: the balance at a report is
   * the one at the end of its transaction). `after` is null for the first stored report: every stored
   * transfer up to its transaction counts.
   */
  window: { after: ChainPosition | null; upTo: ChainPosition }
  /** The reports before this one, newest first, as many as `loadDayInputs` was asked for (`previous` first). */
  history: StoredReport[]
}

const positionOf = (r: StoredReport): ChainPosition => ({
  block: String(r.block_number),
  txIndex: r.tx_index,
})

/** Names the report in an error message. */
export function describeReport(day: Pick<DayRow, 'report_epoch' | 'block_number'>): string {
  return `report epoch ${day.report_epoch} (block ${day.block_number})`
}

/**
 * Loads and checks a day's inputs from its day row (`day`, as the caller has just read it): one wave of reads
 * at once (the report, the fee schedules, the `history` reports before it, the predecessor's day under the
 * day's own link to it), at the day's position (a report that moved is refused below). Throws
 * `DayNotReadyError` (retry later) when the report moved or the predecessor day is not computed,
 * `DayDataError` (fails the day) when the stored data is inconsistent. A day's steps each load them: their
 * round trips add up over a backfill. `inputs.history` holds the reports before this one, newest first.
 */
export async function loadDayInputs(db: Queryable, day: DayRow, history = 1): Promise<DayInputs> {
  const repos = createRepos(db)
  const chainId = day.chain_id
  const epoch = String(day.report_epoch)
  const [report, scheduleRows, before, linked] = await Promise.all([
    repos.records.report(chainId, epoch),
    repos.records.feeSchedules(),
    repos.records.reportsBefore(
      chainId,
      { block: String(day.block_number), logIndex: day.log_index },
      Math.max(1, history),
    ),
    day.previous_epoch === null ? undefined : repos.days.get(chainId, day.previous_epoch),
  ])
  if (
    !report ||
    report.block_hash !== day.block_hash ||
    String(report.block_number) !== String(day.block_number) ||
    report.log_index !== day.log_index
  ) {
    throw new DayNotReadyError(`${describeReport(day)} moved or was rolled back; the day will be re-read`)
  }
  const previous = before[0]
  let previousKey: DayKey | null = null
  let previousHash: string | null = null
  if (previous) {
    const predecessor =
      linked && String(linked.report_epoch) === String(previous.epoch)
        ? linked
        : await repos.days.get(chainId, previous.epoch)
    if (predecessor?.status !== 'computed' || predecessor.visible_version === null) {
      throw new DayNotReadyError(
        `${describeReport(day)} waits for its predecessor (report epoch ${previous.epoch}) to be computed`,
      )
    }
    previousKey = { chainId, epoch: String(previous.epoch), version: predecessor.visible_version }
    previousHash = predecessor.content_hash
  }
  // the pool the report's growth starts from: the previous report's, or for the first stored report the pool
  // right before its transaction as read from the chain (never an assumed 1:1 pool: a history started after
  // launch has grown before it)
  const start = previous
    ? { underlying: previous.total_underlying_supply, supply: previous.total_supply }
    : { underlying: report.pool_before_underlying, supply: report.pool_before_supply }
  if (start.underlying == null || start.supply == null) {
    throw new DayDataError(
      `${describeReport(day)} is the first stored report but its row has no pool before it (ingested before ` +
        'migration 007_report_shapes): roll the chain data back and sync it again',
      { details: { epoch } },
    )
  }
  const supply = BigInt(report.total_supply)
  // the pool at the fee mint (RewardsEarned), before the withdrawal event burns the redeemed shares
  const supplyPreFee =
    report.fee_mint_supply_before != null
      ? BigInt(report.fee_mint_supply_before)
      : supply - BigInt(report.fee_shares)
  const timestamp = Math.floor(report.block_time.getTime() / 1000)
  try {
    const schedules = parseFeeSchedules(scheduleRows)
    const ctx = prepareReport({
      oracle_report: String(report.epoch),
      timestamp,
      underlying: BigInt(report.total_underlying_supply),
      ...(report.fee_mint_underlying != null
        ? { underlying_at_fee_mint: BigInt(report.fee_mint_underlying) }
        : {}),
      supply_pre_fee: supplyPreFee,
      supply,
      previous_underlying: BigInt(start.underlying),
      previous_supply: BigInt(start.supply),
      global_fee_bps: report.global_fee_bps,
      fee_schedule: selectFeeSchedule(schedules, timestamp),
    })
    return {
      day,
      report,
      previous,
      previousKey,
      previousHash,
      ctx,
      blockTime: report.block_time,
      window: { after: previous ? positionOf(previous) : null, upTo: positionOf(report) },
      history: before,
    }
  } catch (err) {
    if (err instanceof EngineError) {
      throw new DayDataError(`${describeReport(day)}: ${err.message}`, {
        details: { ...err.details, code: err.code },
        cause: err,
      })
    }
    throw err
  }
}

/** The inputs of the run a process is computing, loaded once for its shards (`createRunInputs`). */
export interface RunInputs {
  /** The inputs of `day`'s run `version` (its row as just read), loaded at its first shard job in this process. */
  forShard(day: DayRow, version: number): Promise<DayInputs>
}

/**
 * Loads a run's inputs once per process for all of its shard jobs (`loadDayInputs` is a wave of round trips;
 * a day of 1M holders has 16 jobs). A run is one version of one day on one report block: a moved report or a
 * new run loads again, a failed load is not kept, and only the latest run is kept. The finalization loads its
 * own (its checks are the last word before the day becomes visible).
 *
 * @example
 * const inputs = await createRunInputs(db).forShard(day, payload.version)
 */
export function createRunInputs(db: Queryable): RunInputs {
  let latest: { id: string; inputs: Promise<DayInputs> } | undefined
  return {
    forShard(day, version) {
      const id = `${day.chain_id}:${day.report_epoch}:${version}:${day.block_hash}`
      if (latest?.id === id) return latest.inputs
      const inputs = loadDayInputs(db, day)
      const entry = { id, inputs }
      latest = entry
      inputs.catch(() => {
        if (latest === entry) latest = undefined
      })
      return inputs
    },
  }
}
