import { ValidationError } from '../../common/errors.ts'
import { type BackfillStart, type DateRange, prepareBackfill } from '../../db/backfill.ts'
import type { Db } from '../../db/index.ts'
import type { DayRow, RecomputeReason } from '../../db/repos/days.ts'
import { createRepos } from '../../db/repos/index.ts'
import { DATE_YEARS, parseDateOnly } from '../../engine/index.ts'
import type { Processor } from '../runner.ts'

export type { BackfillStart, DateRange } from '../../db/backfill.ts'

/**
 * Checks a YYYY-MM-DD calendar date (2026-02-30 is refused). Returns it unchanged; `name` goes in the message.
 *
 * @example
 * parseDate('2026-04-01', '--from') // '2026-04-01'
 */
export function parseDate(value: string, name: string): string {
  try {
    parseDateOnly(value, name)
  } catch {
    throw new ValidationError(
      `${name} must be a date YYYY-MM-DD from ${DATE_YEARS.min}-01-01 (got ${JSON.stringify(value)})`,
    )
  }
  return value
}

/**
 * Checks both dates and that `from` is on or before `to`.
 *
 * @example
 * validateRange({ from: '2026-04-01', to: '2026-04-30' }) // the same range
 */
export function validateRange(range: DateRange, names = { from: '--from', to: '--to' }): DateRange {
  const from = parseDate(range.from, names.from)
  const to = parseDate(range.to, names.to)
  if (from > to) throw new ValidationError(`${names.from} ${from} is after ${names.to} ${to}`)
  return { from, to }
}

/**
 * Checks the range's dates, then prepares the backfill (db/backfill.ts `prepareBackfill`: failed days, and with
 * `recompute` every day of the range, back to pending). `names`: how the range's ends are named in messages.
 *
 * @example
 * await startBackfill(db, 1, { from: '2026-04-01', to: '2026-04-30', recompute: false })
 */
export async function startBackfill(
  db: Db,
  chainId: number,
  options: DateRange & { recompute: boolean; reason?: RecomputeReason; names?: { from: string; to: string } },
): Promise<BackfillStart> {
  const names = options.names ?? { from: '--from', to: '--to' }
  const range = validateRange(options, names)
  return prepareBackfill(db, chainId, range, {
    recompute: options.recompute,
    ...(options.reason ? { reason: options.reason } : {}),
    toName: names.to,
  })
}

/** A failed day, as progress reports it. */
export interface FailedDay {
  date: string
  report_epoch: string
  error: string
}

/** Where a backfill stands. `computed + pending + computing + failed.length === total`. */
export interface BackfillProgress {
  total: number
  /** computed and current (its predecessor has not changed since) */
  computed: number
  /** waiting: not computed yet, sent back by a recompute, or computed on a predecessor that is not current */
  pending: number
  computing: number
  failed: FailedDay[]
  /** a failed day before the range: the range waits for it (days run in chain order) */
  blockedBy?: FailedDay
}

const position = (d: Pick<DayRow, 'block_number' | 'log_index'>) =>
  [BigInt(d.block_number), d.log_index] as const

/** Chain order: negative when `a` comes before `b`. */
function compareDays(
  a: Pick<DayRow, 'block_number' | 'log_index'>,
  b: Pick<DayRow, 'block_number' | 'log_index'>,
): number {
  const [ab, al] = position(a)
  const [bb, bl] = position(b)
  if (ab !== bb) return ab < bb ? -1 : 1
  return al - bl
}

const failedDay = (d: DayRow): FailedDay => ({
  date: d.date,
  report_epoch: d.report_epoch,
  error: d.error ?? 'unknown error',
})

/**
 * Counts the days of a range by state. A day is done when it is computed and current: every day before the
 * earliest non-current day (`days.next`) is, since days are computed in chain order.
 *
 * @example
 * const p = await backfillProgress(db, 1, { from: '2026-04-01', to: '2026-04-30' })
 * if (p.computed === p.total) console.log('done')
 */
export async function backfillProgress(db: Db, chainId: number, range: DateRange): Promise<BackfillProgress> {
  const repos = createRepos(db)
  const days = await repos.days.list(chainId, range)
  const next = await repos.days.next(chainId)
  const progress: BackfillProgress = { total: days.length, computed: 0, pending: 0, computing: 0, failed: [] }
  for (const day of days) {
    if (day.status === 'failed') progress.failed.push(failedDay(day))
    else if (day.status === 'computing') progress.computing += 1
    else if (day.status === 'computed' && (!next || compareDays(day, next) < 0)) progress.computed += 1
    else progress.pending += 1
  }
  const firstDay = days[0]
  if (next?.status === 'failed' && firstDay && compareDays(next, firstDay) < 0) {
    progress.blockedBy = failedDay(next)
  }
  return progress
}

/**
 * Wraps the scheduling processor (`days`) so that it starts no day after `to`: a backfill computes its range
 * and the days before it that the range needs, and leaves later days to the workers.
 */
export function boundedScheduler(schedule: Processor, db: Db, chainId: number, to: string): Processor {
  return async (job) => {
    const next = await createRepos(db).days.next(chainId)
    if (next && next.date > to) return { waiting: `the next day (${next.date}) is after the backfill range` }
    return schedule(job)
  }
}
