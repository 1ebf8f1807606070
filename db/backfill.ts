import { ValidationError } from '../common/errors.ts'
import type { Db } from './index.ts'
import type { RecomputeReason } from './repos/days.ts'
import { inTransaction } from './repos/index.ts'

/**
 * The day pipeline's database side of a backfill: the range's days sent back to pending in one transaction,
 * under the day scheduler's lock. Used by `lsreport backfill` (jobs/days/backfill.ts, which checks the dates
 * first) and by the running service's `POST /v1/admin/backfill`.
 */

/** One day scheduler at a time across every worker: the key of its transaction-scoped advisory lock ('lsrd'). */
export const SCHEDULER_LOCK_KEY = 0x6c737264

/** A closed range of UTC dates, YYYY-MM-DD (checked by the caller). */
export interface DateRange {
  from: string
  to: string
}

/** What `prepareBackfill` found and changed. */
export interface BackfillStart extends DateRange {
  /** days (oracle reports) in the range */
  days: number
  /** failed days sent back to pending (in the range or before it: the range needs them) */
  retried: number
  /** days of the range sent back to pending by `recompute` */
  recomputed: number
  /** the ingested reports, first and last date */
  ingested: DateRange
}

/**
 * Prepares a backfill of a checked date range: adds a day for every report the follower has ingested (up to the
 * River cursor, as the scheduler does), checks the range against them, sends failed days up to `to` back to
 * pending (a rerun retries them; a failed day before the range blocks it) and, with `recompute`, every day of
 * the range (its new versions logged with `reason`, default 'recompute requested'). Days that are computed and
 * current stay as they are: running a range twice changes nothing. `toName`: how the range's end is named in
 * messages (`--to`, `to`). The day jobs then compute the pending days in chain order.
 *
 * @example
 * await prepareBackfill(db, 1, { from: '2026-04-01', to: '2026-04-30' }, { recompute: false, toName: '--to' })
 */
export async function prepareBackfill(
  db: Db,
  chainId: number,
  range: DateRange,
  options: { recompute: boolean; reason?: RecomputeReason; toName: string },
): Promise<BackfillStart> {
  return inTransaction(db, async (repos, tx) => {
    // a backfill's setup and a scheduling pass never interleave
    await tx.raw('select pg_advisory_xact_lock(?, ?)', [SCHEDULER_LOCK_KEY, chainId])
    const cursor = await repos.chain.cursor(chainId, 'river')
    if (cursor) await repos.days.syncWithReports(chainId, BigInt(cursor.block_number))
    const all = await repos.days.list(chainId)
    const first = all[0]
    const last = all.at(-1)
    if (!first || !last) {
      throw new ValidationError(
        `no oracle report has been ingested for chain ${chainId}: run \`lsreport sync\` first`,
      )
    }
    const ingested = { from: first.date, to: last.date }
    if (range.to > last.date) {
      throw new ValidationError(
        `${options.toName} ${range.to} is after the latest ingested report: reports are ingested up to ${last.date}; ` +
          `run \`lsreport sync\` to ingest newer ones, or pick an earlier ${options.toName}`,
      )
    }
    const inRange = all.filter((d) => d.date >= range.from && d.date <= range.to)
    if (inRange.length === 0) {
      throw new ValidationError(
        `no oracle report between ${range.from} and ${range.to} (reports are ingested from ${ingested.from} to ${ingested.to})`,
      )
    }
    let retried = 0
    const failedDates = new Set(
      all.filter((d) => d.status === 'failed' && d.date <= range.to).map((d) => d.date),
    )
    for (const date of failedDates) {
      retried += await repos.days.requestRecompute(chainId, { from: date, to: date })
    }
    const recomputed = options.recompute
      ? await repos.days.requestRecompute(chainId, range, options.reason ?? 'recompute requested')
      : 0
    return { ...range, days: inRange.length, retried, recomputed, ingested }
  })
}
