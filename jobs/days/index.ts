import type { Address } from '../../common/address.ts'
import type { Logger } from '../../common/logger.ts'
import { isPglite } from '../../db/bulk.ts'
import type { Db } from '../../db/index.ts'
import type { DayRow } from '../../db/repos/days.ts'
import { createRepos } from '../../db/repos/index.ts'
import { type JobInfo, type JobRunner, type Processor, UnrecoverableError } from '../runner.ts'
import { createDayFlows } from './day-flows.ts'
import { DayDataError } from './errors.ts'
import { type FinalizeJob, finalizeDay, type StartNext } from './finalize.ts'
import { createRunInputs } from './inputs.ts'
import { DAY_JOBS, scheduleDays, startNextRun, takeSchedulerLock } from './scheduler.ts'
import { computeShard, type ShardJob } from './shard.ts'
import { spanRange } from './shards.ts'

export { DAY_JOBS, dayJobId, scheduleDays } from './scheduler.ts'

export interface DayJobsDeps {
  db: Db
  chainId: number
  logger: Logger
  /** Addresses whose incoming transfers count as burns (redeems): River and the RedeemManager. */
  burnAddresses: readonly Address[]
  /** The runner the processors enqueue on (late-bound: the runner is built from the processors). */
  runner: () => JobRunner
  /** Wallets per shard (DAY_SHARD_WALLETS; default 5,000). */
  shardWallets?: number
}

function isPayload(
  data: unknown,
): data is { chainId: number; epoch: string; version: number; shards: number } {
  const d = data as Record<string, unknown> | null
  return (
    typeof d === 'object' &&
    d !== null &&
    Number.isInteger(d.chainId) &&
    typeof d.epoch === 'string' &&
    /^\d+$/.test(d.epoch) &&
    Number.isInteger(d.version) &&
    Number.isInteger(d.shards) &&
    (d.span === undefined || Number.isInteger(d.span)) &&
    (d.until === undefined || typeof d.until === 'string')
  )
}

/**
 * What a scheduling job's payload says: the day whose finalization enqueued it (`after`, `wallets`; none for
 * a periodic pass) and a backfill's last date (`until`).
 */
function passOptions(data: unknown): { finished?: { epoch: string; wallets: number }; until?: string } {
  const d = data as { after?: unknown; wallets?: unknown; until?: unknown } | null
  if (typeof d !== 'object' || d === null) return {}
  return {
    ...(typeof d.after === 'string' && Number.isInteger(d.wallets)
      ? { finished: { epoch: d.after, wallets: d.wallets as number } }
      : {}),
    ...(typeof d.until === 'string' ? { until: d.until } : {}),
  }
}

/**
 * The day pipeline's processors: `days` (schedule), `day-shard` (wallet records of one address range) and
 * `day` (finalize). A day whose data is inconsistent fails for good (UnrecoverableError), and so does one
 * that ran out of attempts; the failure and its error are kept on the day.
 */
export function createDayJobs(deps: DayJobsDeps): Record<string, Processor> {
  const { db, chainId, logger } = deps
  const log = logger.child({ component: 'days' })
  // the period's flows, read once per run of a day in this process and shared by its shards
  const flows = createDayFlows(db, deps.burnAddresses)
  const runInputs = createRunInputs(db)
  // how runs are cut into jobs: a job's write holds PGlite's one connection (the API waits for it)
  const sizes = {
    ...(deps.shardWallets ? { shardWallets: deps.shardWallets } : {}),
    ...(isPglite(db) ? { jobShards: 1 } : {}),
  }

  /** Reads a run's inputs and its day's flows ahead of its first job (a failed read is read again then). */
  function prefetch(day: DayRow, version: number) {
    const key = { chainId: day.chain_id, epoch: String(day.report_epoch), version }
    runInputs
      .forRun(day, version)
      // the day's flows are read once for the run (not a chain's first day: its flows are read by range)
      .then((inputs) => inputs.window.after && flows.forShard(inputs, key, spanRange(0, 1, 1)))
      .catch(() => undefined)
  }

  /** Runs a step of a run; a stale run is skipped; a final failure is recorded on the day. */
  async function step<T>(job: JobInfo, fn: (payload: ShardJob | FinalizeJob, day: DayRow) => Promise<T>) {
    if (!isPayload(job.data)) throw new UnrecoverableError(`malformed ${job.name} payload`)
    const payload = job.data as ShardJob | FinalizeJob
    const day = await createRepos(db).days.get(payload.chainId, payload.epoch)
    if (!day || day.computing_version !== payload.version) return { skipped: 'run replaced' }
    try {
      return await fn(payload, day)
    } catch (err) {
      const final = err instanceof DayDataError || job.attemptsMade + 1 >= job.attempts
      if (final) {
        await createRepos(db).days.failRun(
          payload.chainId,
          payload.epoch,
          payload.version,
          (err as Error).message,
        )
        log.error(
          { err, report_epoch: payload.epoch, version: payload.version, job_id: job.id },
          'day failed',
        )
      }
      if (err instanceof DayDataError) throw new UnrecoverableError(err.message)
      throw err
    }
  }

  return {
    [DAY_JOBS.schedule]: async (job) => {
      const runner = deps.runner()
      const result = await scheduleDays({
        db,
        chainId,
        logger: log,
        enqueueFlow: (flow) => runner.enqueueFlow(flow),
        inFlight: (id) => runner.has(id),
        ...sizes,
        // a pass a finished day starts skips what the periodic passes do (adding and re-opening days)
        ...passOptions(job.data),
      })
      return result
    },
    [DAY_JOBS.shard]: (job) =>
      step(job, async (payload, day) => {
        const inputs = await runInputs.forRun(day, payload.version)
        const result = await computeShard(db, inputs, payload as ShardJob, flows)
        return { wallets: result.wallets, shards: result.shards.length, duration_ms: result.duration_ms }
      }),
    [DAY_JOBS.finalize]: (job) =>
      step(job, async (payload, day) => {
        const inputs = await runInputs.forRun(day, payload.version)
        const { until } = payload as FinalizeJob
        const runner = deps.runner()
        // the next day's run starts in the finalizing transaction when the scheduler's lock is free
        const startNext: StartNext = async (repos, tx, finished) => {
          if (!(await takeSchedulerLock(tx, chainId))) return undefined
          const pass = await startNextRun(repos, tx, {
            chainId,
            logger: log,
            inFlight: (id) => runner.has(id),
            ...sizes,
            finished,
            ...(until !== undefined ? { until } : {}),
            chained: true,
          })
          return pass.run
        }
        const outcome = await finalizeDay(db, inputs, payload as FinalizeJob, startNext)
        if (outcome.status !== 'computed') return outcome
        log.info({ report_epoch: payload.epoch, date: day.date, wallets: outcome.wallets }, 'day computed')
        const { next, ...computed } = outcome
        if (next) {
          await runner.enqueueFlow(next.flow)
          // in this process the next run's first job comes next: its inputs and flows are read meanwhile
          if (runner.kind === 'inline') prefetch(next.day, next.version)
        } else {
          // start the next day at once rather than at the next periodic pass
          await runner.enqueue(
            DAY_JOBS.schedule,
            { after: payload.epoch, wallets: outcome.wallets, ...(until !== undefined ? { until } : {}) },
            { jobId: `days-after-${payload.epoch}-v${payload.version}`, attempts: 1 },
          )
        }
        return computed
      }),
  }
}
