import type { Address } from '../../common/address.ts'
import type { Logger } from '../../common/logger.ts'
import { isPglite } from '../../db/bulk.ts'
import type { Db } from '../../db/index.ts'
import type { DayRow } from '../../db/repos/days.ts'
import { createRepos } from '../../db/repos/index.ts'
import {
  type InlineConcurrency,
  type JobInfo,
  type JobRunner,
  type Processor,
  UnrecoverableError,
} from '../runner.ts'
import { createDayFlows } from './day-flows.ts'
import { DayDataError } from './errors.ts'
import { type FinalizeJob, finalizeDay } from './finalize.ts'
import { createRunInputs, loadDayInputs } from './inputs.ts'
import { DAY_JOBS, scheduleDays } from './scheduler.ts'
import { computeShard, type ShardJob } from './shard.ts'

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
    (d.span === undefined || Number.isInteger(d.span))
  )
}

/**
 * How many of a day's shard jobs the inline runner runs at once: 2 on Postgres (one job's rows are
 * computed while the server ingests the other's: the node process and the server each keep a core busy),
 * 1 on PGlite (its one connection runs one statement at a time).
 */
export function inlineDayConcurrency(db: Db): InlineConcurrency {
  return { [DAY_JOBS.shard]: isPglite(db) ? 1 : 2 }
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
    [DAY_JOBS.schedule]: async () => {
      const runner = deps.runner()
      const result = await scheduleDays({
        db,
        chainId,
        logger: log,
        enqueueFlow: (flow) => runner.enqueueFlow(flow),
        inFlight: (id) => runner.has(id),
        ...sizes,
      })
      return result
    },
    [DAY_JOBS.shard]: (job) =>
      step(job, async (payload, day) => {
        const inputs = await runInputs.forShard(day, payload.version)
        const result = await computeShard(db, inputs, payload as ShardJob, flows)
        return { wallets: result.wallets, shards: result.shards.length, duration_ms: result.duration_ms }
      }),
    [DAY_JOBS.finalize]: (job) =>
      step(job, async (payload, day) => {
        // its own inputs, read now (the last word before the day becomes visible), with the 8 reports before
        // the day its protocol record reads
        const inputs = await loadDayInputs(db, day, 8)
        const outcome = await finalizeDay(db, inputs, payload as FinalizeJob)
        if (outcome.status === 'unchanged') {
          log.info(
            {
              report_epoch: payload.epoch,
              date: inputs.day.date,
              wallets: outcome.wallets,
              version: payload.version,
              visible_version: outcome.visible_version,
            },
            'day recomputed with unchanged records: no version published',
          )
        }
        if (outcome.status === 'computed') {
          log.info(
            { report_epoch: payload.epoch, date: inputs.day.date, wallets: outcome.wallets },
            'day computed',
          )
        }
        if (outcome.status !== 'superseded') {
          // start the next day at once rather than at the next periodic pass
          await deps
            .runner()
            .enqueue(
              DAY_JOBS.schedule,
              {},
              { jobId: `days-after-${payload.epoch}-v${payload.version}`, attempts: 1 },
            )
        }
        return outcome
      }),
  }
}
