import type { Logger } from '../../common/logger.ts'
import { SCHEDULER_LOCK_KEY } from '../../db/backfill.ts'
import type { Db, Tx } from '../../db/index.ts'
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

export interface SchedulerDeps {
  db: Db
  chainId: number
  logger: Logger
  /** Adds the flow and tells whether a job id is in flight (the runner, late-bound). */
  enqueueFlow(flow: Flow): Promise<void>
  inFlight(jobId: string): Promise<boolean>
  /** Wallets per shard (default SHARD_WALLETS). */
  shardWallets?: number
  /**
   * At most this many shards per job (default JOB_SHARDS). 1 on PGlite: a job's write holds its one
   * connection, and the API of the same process waits for it.
   */
  jobShards?: number
}

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
) {
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

/**
 * One scheduling pass: creates a pending day for every report the follower has ingested (River cursor),
 * re-opens days a reorg moved, and starts the earliest day that is not current once no other run is in
 * flight. Days run one at a time in chain order (each needs its predecessor's totals); a day's shard jobs
 * (up to JOB_SHARDS consecutive shards each) run in parallel on every worker. A run whose job vanished (a
 * crashed process) is started again.
 */
export async function scheduleDays(deps: SchedulerDeps): Promise<ScheduleResult> {
  const { db, chainId } = deps
  // the flow is added after the run's transaction commits, so its jobs always see the run
  let flow: Flow | undefined
  const result = await inTransaction(db, async (repos, tx): Promise<ScheduleResult> => {
    const [lock] = (
      await tx.raw('select pg_try_advisory_xact_lock(?, ?) as ok', [SCHEDULER_LOCK_KEY, chainId])
    ).rows
    if (!lock?.ok) return { added: 0, reopened: 0, deleted: 0, waiting: 'another scheduler is running' }
    const cursor = await repos.chain.cursor(chainId, 'river')
    if (!cursor) return { added: 0, reopened: 0, deleted: 0, waiting: 'nothing ingested yet' }
    const synced = await repos.days.syncWithReports(chainId, BigInt(cursor.block_number))
    // the runs in flight first, their rows locked (a run finishing meanwhile has committed before this read or
    // waits for this pass to commit), then the next day as they leave it: a day whose run finished while this
    // pass looked at its job is never taken for abandoned and started again
    const computing = await repos.days.computingRuns(chainId)
    const next = await repos.days.next(chainId)
    if (!next) return { ...synced, waiting: 'every day is computed' }
    // a run's age on the database's clock, as its started_at: a worker's own clock may be off
    for (const day of computing) {
      const age = day.age_ms ?? Number.POSITIVE_INFINITY
      const version = day.computing_version
      const inFlight = version !== null && (await deps.inFlight(dayJobId(chainId, day.report_epoch, version)))
      if (age < ABANDONED_RUN_MS || inFlight) {
        return { ...synced, waiting: `report epoch ${day.report_epoch} is being computed` }
      }
      deps.logger.warn(
        { chain_id: chainId, report_epoch: day.report_epoch, version, age_ms: age },
        'day run abandoned (no job in the queue): started again',
      )
    }
    if (next.status === 'failed') {
      return {
        ...synced,
        waiting: `report epoch ${next.report_epoch} (${next.date}) failed: ${next.error ?? 'unknown error'}`,
      }
    }
    const shards = shardCount(await estimateWallets(repos, tx, chainId, next), deps.shardWallets)
    const version = await repos.days.startRun(chainId, next.report_epoch, shards)
    const payload = { chainId, epoch: next.report_epoch, version, shards }
    const parentId = dayJobId(chainId, next.report_epoch, version)
    // one job per `span` consecutive shards (the job's id names its first shard)
    const span = jobSpan(shards, deps.jobShards)
    flow = {
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
    return { ...synced, started: { epoch: next.report_epoch, date: next.date, version, shards } }
  })
  if (flow) await deps.enqueueFlow(flow)
  return result
}
