import type { Logger } from '../../common/logger.ts'
import type { Db, Tx } from '../../db/index.ts'
import type { DayRow } from '../../db/repos/days.ts'
import { inTransaction, type Repos } from '../../db/repos/index.ts'
import type { Flow } from '../runner.ts'
import { jobSpan, shardCount } from './shards.ts'

/** Job names of the day pipeline. */
export const DAY_JOBS = {
  /** periodic: adds days for new final reports and starts the next run */
  schedule: 'days',
  /** child: one shard of a day's wallet records */
  shard: 'day-shard',
  /** parent: account, protocol and fee records, then the day becomes visible */
  finalize: 'day',
} as const

/**
 * The deterministic id of a run's flow (its parent job): one per day and version, so a run started again
 * never finds its id taken by the flow of the run it replaced (a queue ignores an add whose id is live).
 */
export function dayJobId(chainId: number, epoch: string, version: number): string {
  return `day-${chainId}-${epoch}-v${version}`
}

/** What a scheduling pass did. */
export interface ScheduleResult {
  added: number
  reopened: number
  deleted: number
  /** the day whose run was started, if any */
  started?: { epoch: string; date: string; version: number; shards: number }
  /** why nothing was started */
  waiting?: string
}

/** What starting a day's run needs besides the database. */
export interface PassDeps {
  chainId: number
  logger: Logger
  /** Tells whether a job id is in flight (the runner, late-bound). */
  inFlight(jobId: string): Promise<boolean>
  /** Wallets per shard (default SHARD_WALLETS). */
  shardWallets?: number
  /**
   * The day whose finalization started this pass (its epoch and wallets), if one did. Such a pass takes the
   * days as they are, without adding days for newly ingested reports nor re-opening days a reorg moved
   * (reads of the whole history: the periodic passes do that), and sizes that day's successor from its
   * wallets.
   */
  finished?: { epoch: string; wallets: number }
  /** No day after this date (YYYY-MM-DD) is started: a backfill's range (`boundedScheduler`). */
  until?: string
  /**
   * At most this many shards per job (default JOB_SHARDS). 1 on PGlite: a job's write holds its one
   * connection, and the API of the same process waits for it.
   */
  jobShards?: number
}

export interface SchedulerDeps extends PassDeps {
  db: Db
  /** Adds the flow (the runner, late-bound). */
  enqueueFlow(flow: Flow): Promise<void>
}

/** One scheduler at a time across every worker: the key of its transaction-scoped advisory lock ('lsrd'). */
export const SCHEDULER_LOCK_KEY = 0x6c737264

/**
 * A run is added to the queue just after its transaction commits; a computing day whose job is not (yet)
 * in the queue is taken for abandoned (its process died) only once its run is this old.
 */
export const ABANDONED_RUN_MS = 10_000

/**
 * About how many wallets a day has: its predecessor's, or for the chain's first report the transfers before
 * it (an upper bound of its holders), so a first day is sharded too. Reads in the scheduler's transaction.
 */
async function estimateWallets(
  repos: Repos,
  tx: Tx,
  chainId: number,
  day: { previous_epoch: string | null; block_number: string },
  finished: SchedulerDeps['finished'],
) {
  if (finished && day.previous_epoch !== null && String(day.previous_epoch) === finished.epoch) {
    return finished.wallets
  }
  if (day.previous_epoch === null) {
    const [row] = await tx('lseth_transfers')
      .where({ chain_id: chainId })
      .where('block_number', '<=', day.block_number)
      .count<{ n: string }[]>({ n: '*' })
    return Number(row?.n ?? 0)
  }
  const previous = await repos.days.get(chainId, day.previous_epoch)
  return previous?.wallets ?? 0
}

/** A run a pass started: its flow (to add once the pass commits), its day and version. */
export interface StartedRun {
  flow: Flow
  day: DayRow
  version: number
}

/** Takes the scheduler's lock for the rest of `tx`, without waiting: false while another scheduler holds it. */
export async function takeSchedulerLock(tx: Tx, chainId: number): Promise<boolean> {
  const [lock] = (await tx.raw('select pg_try_advisory_xact_lock(?, ?) as ok', [SCHEDULER_LOCK_KEY, chainId]))
    .rows
  return lock?.ok === true
}

/**
 * In `tx`, which holds the scheduler's lock: starts the run of the earliest day that is not current once no
 * other run is in flight (a run whose job vanished, a crashed process, is started again). Returns what it did
 * and the run it started (its flow, to add once `tx` commits: its jobs always see the run). With `chained`, the pass of
 * a finalization's own transaction: a run in flight, whatever its age, means nothing is started.
 */
export async function startNextRun(
  repos: Repos,
  tx: Tx,
  deps: PassDeps & { chained?: boolean },
  synced = { added: 0, reopened: 0, deleted: 0 },
): Promise<{ result: ScheduleResult; run?: StartedRun }> {
  const { chainId } = deps
  const waiting = (why: string) => ({ result: { ...synced, waiting: why } })
  // the runs in flight first, their rows locked (a run finishing meanwhile has committed before this read or
  // waits for this pass to commit), then the next day as they leave it: a day whose run finished while this
  // pass looked at its job is never taken for abandoned and started again
  const computing = await repos.days.computingRuns(chainId)
  const next = await repos.days.next(chainId)
  if (!next) return waiting('every day is computed')
  // a run's age on the database's clock, as its started_at: a worker's own clock may be off
  for (const day of computing) {
    const age = day.age_ms ?? Number.POSITIVE_INFINITY
    const version = day.computing_version
    const inFlight =
      deps.chained === true ||
      (version !== null && (await deps.inFlight(dayJobId(chainId, day.report_epoch, version))))
    if (age < ABANDONED_RUN_MS || inFlight) {
      return waiting(`report epoch ${day.report_epoch} is being computed`)
    }
    deps.logger.warn(
      { chain_id: chainId, report_epoch: day.report_epoch, version, age_ms: age },
      'day run abandoned (no job in the queue): started again',
    )
  }
  if (next.status === 'failed') {
    return waiting(
      `report epoch ${next.report_epoch} (${next.date}) failed: ${next.error ?? 'unknown error'}`,
    )
  }
  if (deps.until !== undefined && next.date > deps.until) {
    return waiting(`the next day (${next.date}) is after the backfill range`)
  }
  const wallets = await estimateWallets(repos, tx, chainId, next, deps.finished)
  const shards = shardCount(wallets, deps.shardWallets)
  const version = await repos.days.startRun(chainId, next.report_epoch, shards)
  const payload = {
    chainId,
    epoch: next.report_epoch,
    version,
    shards,
    ...(deps.until !== undefined ? { until: deps.until } : {}),
  }
  const parentId = dayJobId(chainId, next.report_epoch, version)
  // one job per `span` consecutive shards (the job's id names its first shard)
  const span = jobSpan(shards, deps.jobShards)
  const flow = {
    name: DAY_JOBS.finalize,
    jobId: parentId,
    data: payload,
    children: Array.from({ length: shards / span }, (_, job) => ({
      name: DAY_JOBS.shard,
      jobId: `${parentId}-s${job * span}`,
      data: { ...payload, shard: job * span, span },
    })),
  }
  deps.logger.info(
    { chain_id: chainId, report_epoch: next.report_epoch, date: next.date, version, shards },
    'day run started',
  )
  return {
    result: { ...synced, started: { epoch: next.report_epoch, date: next.date, version, shards } },
    run: { flow, day: next, version },
  }
}

/**
 * One scheduling pass: creates a pending day for every report the follower has ingested (River cursor),
 * re-opens days a reorg moved, and starts the earliest day that is not current once no other run is in
 * flight (`startNextRun`). Days run one at a time in chain order (each needs its predecessor's totals); a
 * day's shards run in parallel on every worker.
 */
export async function scheduleDays(deps: SchedulerDeps): Promise<ScheduleResult> {
  const { db, chainId } = deps
  // the flow is added after the run's transaction commits, so its jobs always see the run
  let flow: Flow | undefined
  const result = await inTransaction(db, async (repos, tx): Promise<ScheduleResult> => {
    if (!(await takeSchedulerLock(tx, chainId))) {
      return { added: 0, reopened: 0, deleted: 0, waiting: 'another scheduler is running' }
    }
    let synced = { added: 0, reopened: 0, deleted: 0 }
    if (deps.finished === undefined) {
      const cursor = await repos.chain.cursor(chainId, 'river')
      if (!cursor) return { ...synced, waiting: 'nothing ingested yet' }
      synced = await repos.days.syncWithReports(chainId, BigInt(cursor.block_number))
    }
    const pass = await startNextRun(repos, tx, deps, synced)
    flow = pass.run?.flow
    return pass.result
  })
  if (flow) await deps.enqueueFlow(flow)
  return result
}
