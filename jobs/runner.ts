import { FlowProducer, Queue, UnrecoverableError, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import type { Logger } from '../common/logger.ts'
import { QUEUE_NAME, QUEUE_STATES, type QueueCounts } from '../common/queue.ts'

/** What a processor sees of a job: the same under BullMQ and the inline runner. */
export interface JobInfo {
  id: string
  name: string
  data: unknown
  attemptsMade: number
  /** Attempts allowed in all (the job fails for good when attemptsMade + 1 reaches it). */
  attempts: number
  /**
   * Marks progress (a chunk written): a long job that calls it now and then is not taken for stuck by the
   * worker's /health (jobs/job-watch.ts). Present when the processors are watched (`lsreport worker`).
   */
  progress?: () => void
}

/** A processor: a plain function, so it runs under BullMQ and the inline runner alike. */
export type Processor = (job: JobInfo) => Promise<unknown>

export interface EnqueueOptions {
  /** Deterministic id: a job with the same id queued or running is not added twice. No ':' allowed. */
  jobId?: string
  delayMs?: number
  /** Attempts before the job lands in the failed set (default 5). */
  attempts?: number
}

/** One job of a flow: its name, payload and deterministic id. */
export interface FlowJob {
  name: string
  data: unknown
  jobId: string
}

/** A parent job that runs once every child has succeeded (and fails when a child fails for good). */
export interface Flow extends FlowJob {
  children: FlowJob[]
}

export interface FailedJob {
  id: string
  name: string
  error: string
  attemptsMade: number
}

/** Runs named jobs: in-process (`inline`) or on Redis (`bullmq`). */
export interface JobRunner {
  kind: 'inline' | 'bullmq'
  enqueue(name: string, data: unknown, options?: EnqueueOptions): Promise<void>
  /** Adds a flow; a flow whose parent id is queued or running is not added twice. */
  enqueueFlow(flow: Flow): Promise<void>
  /** True while a job with this id is queued, waiting for children, delayed or running. */
  has(jobId: string): Promise<boolean>
  /** Runs `name` every `intervalMs` (one scheduler per name; re-registering updates it). */
  every(name: string, intervalMs: number, data?: unknown): Promise<void>
  start(): Promise<void>
  /** Waits until no job is queued or running (tests, CLI). */
  idle(timeoutMs?: number): Promise<void>
  failed(): Promise<FailedJob[]>
  /** Jobs per state now (the metrics' queue depth and failures). */
  counts(): Promise<QueueCounts>
  /** Stops taking jobs and waits for the one in flight. */
  close(): Promise<void>
}

export { UnrecoverableError }

const BACKOFF_BASE_MS = 500

function backoff(attempt: number): number {
  return Math.min(30_000, BACKOFF_BASE_MS * 2 ** (attempt - 1))
}

function validateJobId(jobId: string | undefined) {
  if (jobId?.includes(':')) throw new Error(`job id ${jobId} must not contain ':'`)
}

/** How many jobs of a name the inline runner runs at once (1 for a name not listed). */
export type InlineConcurrency = Readonly<Record<string, number>>

/**
 * The embedded runner: the same processors, in process, one job at a time per name (or `concurrency[name]`),
 * deduplicated by job id, retried with exponential backoff, failures kept with their error.
 */
export function createInlineRunner(
  processors: Record<string, Processor>,
  logger: Logger,
  concurrency: InlineConcurrency = {},
): JobRunner {
  interface Pending {
    id: string
    name: string
    data: unknown
    attemptsMade: number
    attempts: number
    runAt: number
    /** ids of the children that must complete first (a flow's parent) */
    waitFor?: string[]
  }
  const queue: Pending[] = []
  const completedChildren = new Set<string>()
  const failedChildren = new Map<string, string>()
  const active = new Set<string>()
  // jobs running per name, and whether a name is at its limit
  const running = new Map<string, number>()
  const busy = (name: string) => (running.get(name) ?? 0) >= (concurrency[name] ?? 1)
  const failedJobs: FailedJob[] = []
  const timers = new Set<NodeJS.Timeout>()
  let started = false
  let closing = false
  let seq = 0
  let wake: NodeJS.Timeout | undefined
  // a job due now starts on the next turn of the event loop, not after a timer's minimum 1 ms: a day is a
  // chain of jobs (scheduling, shards, finalization), and a backfill of small days is mostly such hops
  let soon: NodeJS.Immediate | undefined
  const inFlight = new Set<Promise<void>>()

  const schedule = () => {
    if (!started || closing) return
    if (wake) clearTimeout(wake)
    wake = undefined
    const now = Date.now()
    const next = queue
      .filter((j) => !busy(j.name) && (childrenDone(j) || failedChild(j) !== undefined))
      .reduce((min, j) => Math.min(min, j.runAt), Number.POSITIVE_INFINITY)
    if (next === Number.POSITIVE_INFINITY) return
    if (next <= now) {
      soon ??= setImmediate(() => {
        soon = undefined
        pump()
      }).unref()
      return
    }
    wake = setTimeout(pump, next - now)
    wake.unref()
  }

  /** A parent runs when all its children completed; a child that failed for good fails the parent. */
  const childrenDone = (job: Pending) => (job.waitFor ?? []).every((id) => completedChildren.has(id))
  const failedChild = (job: Pending) => (job.waitFor ?? []).find((id) => failedChildren.has(id))

  const run = async (job: Pending) => {
    const processor = processors[job.name]
    try {
      if (!processor) throw new UnrecoverableError(`no processor for job ${job.name}`)
      await processor({
        id: job.id,
        name: job.name,
        data: job.data,
        attemptsMade: job.attemptsMade,
        attempts: job.attempts,
      })
      if (childIds.has(job.id)) completedChildren.add(job.id)
      for (const id of job.waitFor ?? []) {
        completedChildren.delete(id)
        childIds.delete(id)
      }
    } catch (err) {
      job.attemptsMade += 1
      const unrecoverable = err instanceof UnrecoverableError
      if (!unrecoverable && job.attemptsMade < job.attempts && !closing) {
        logger.warn(
          { err, job_id: job.id, job_name: job.name, attempts_made: job.attemptsMade },
          'job failed, will retry',
        )
        job.runAt = Date.now() + backoff(job.attemptsMade)
        queue.push(job)
      } else {
        logger.error(
          { err, job_id: job.id, job_name: job.name, attempts_made: job.attemptsMade },
          'job failed',
        )
        failedJobs.push({
          id: job.id,
          name: job.name,
          error: (err as Error).message,
          attemptsMade: job.attemptsMade,
        })
        if (childIds.has(job.id)) failedChildren.set(job.id, (err as Error).message)
      }
    } finally {
      active.delete(job.id)
      running.set(job.name, (running.get(job.name) ?? 1) - 1)
    }
  }

  const pump = () => {
    if (closing) return
    const now = Date.now()
    for (let i = 0; i < queue.length; ) {
      const job = queue[i]!
      const failed = failedChild(job)
      if (failed !== undefined) {
        // a child failed for good: the parent fails without running (BullMQ's failParentOnFailure)
        queue.splice(i, 1)
        failedJobs.push({
          id: job.id,
          name: job.name,
          error: `child ${failed} failed: ${failedChildren.get(failed)}`,
          attemptsMade: 0,
        })
        for (const id of job.waitFor ?? []) {
          failedChildren.delete(id)
          completedChildren.delete(id)
          childIds.delete(id)
        }
        continue
      }
      if (job.runAt <= now && !busy(job.name) && childrenDone(job)) {
        queue.splice(i, 1)
        active.add(job.id)
        running.set(job.name, (running.get(job.name) ?? 0) + 1)
        const p = run(job).finally(() => {
          inFlight.delete(p)
          schedule()
        })
        inFlight.add(p)
      } else i++
    }
    schedule()
  }

  const childIds = new Set<string>()

  const enqueue = async (name: string, data: unknown, options: EnqueueOptions = {}) => {
    validateJobId(options.jobId)
    const id = options.jobId ?? `${name}-${++seq}`
    if (closing) return
    if (queue.some((j) => j.id === id) || active.has(id)) return
    queue.push({
      id,
      name,
      data,
      attemptsMade: 0,
      attempts: options.attempts ?? 5,
      runAt: Date.now() + (options.delayMs ?? 0),
    })
    schedule()
  }

  const has = (id: string) => queue.some((j) => j.id === id) || active.has(id)

  return {
    kind: 'inline',
    enqueue,
    async enqueueFlow(flow) {
      for (const job of [flow, ...flow.children]) validateJobId(job.jobId)
      if (closing || has(flow.jobId)) return
      for (const child of flow.children) {
        childIds.add(child.jobId)
        failedChildren.delete(child.jobId)
        completedChildren.delete(child.jobId)
        await enqueue(child.name, child.data, { jobId: child.jobId })
      }
      queue.push({
        id: flow.jobId,
        name: flow.name,
        data: flow.data,
        attemptsMade: 0,
        attempts: 5,
        runAt: Date.now(),
        waitFor: flow.children.map((c) => c.jobId),
      })
      schedule()
    },
    async has(id) {
      return has(id)
    },
    async every(name, intervalMs, data) {
      const tick = () => void enqueue(name, data ?? {}, { jobId: `every-${name}` })
      const timer = setInterval(tick, intervalMs)
      timer.unref()
      timers.add(timer)
      tick()
    },
    async start() {
      started = true
      schedule()
    },
    async idle(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs
      while (queue.some((j) => j.runAt <= Date.now() + 50) || inFlight.size > 0) {
        if (Date.now() > deadline) throw new Error('inline runner did not go idle in time')
        await new Promise((r) => setTimeout(r, 20))
      }
    },
    async failed() {
      return [...failedJobs]
    },
    async counts() {
      const now = Date.now()
      const parents = queue.filter((j) => !childrenDone(j)).length
      const delayed = queue.filter((j) => childrenDone(j) && j.runAt > now).length
      return {
        waiting: queue.length - parents - delayed,
        active: active.size,
        delayed,
        prioritized: 0,
        'waiting-children': parents,
        failed: failedJobs.length,
      }
    },
    async close() {
      closing = true
      for (const t of timers) clearInterval(t)
      if (wake) clearTimeout(wake)
      if (soon) clearImmediate(soon)
      await Promise.allSettled([...inFlight])
    },
  }
}

/**
 * The production runner: one BullMQ queue (`lsreport`) on Redis, a worker that dispatches by job name,
 * schedulers for periodic jobs. Scale by starting more workers (`lsreport worker`).
 */
export function createBullRunner(
  processors: Record<string, Processor>,
  options: {
    redisUrl: string
    prefix?: string
    concurrency?: number
    /** How long a worker's lock on a job lasts; a job of a dead worker is picked up after it (default 15 s). */
    lockMs?: number
    logger: Logger
  },
): JobRunner {
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null })
  const prefix = options.prefix ?? 'lsreport'
  const queue = new Queue(QUEUE_NAME, { connection, prefix })
  const flows = new FlowProducer({ connection, prefix })
  const lockMs = options.lockMs ?? 15_000
  const jobOptions = (jobId: string | undefined, attempts = 5) => ({
    ...(jobId ? { jobId } : {}),
    attempts,
    backoff: { type: 'exponential' as const, delay: BACKOFF_BASE_MS },
    removeOnComplete: true,
    removeOnFail: 1000,
  })
  const LIVE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']
  // periodic jobs live in Redis: after a Redis restart without persistence they are registered again
  const schedulers = new Map<string, { intervalMs: number; data: unknown }>()
  const upsertScheduler = (name: string, intervalMs: number, data: unknown) =>
    queue.upsertJobScheduler(
      `every-${name}`,
      { every: intervalMs },
      { name, data: data ?? {}, opts: { attempts: 1, removeOnComplete: true, removeOnFail: 100 } },
    )
  let readyOnce = false
  connection.on('ready', () => {
    if (!readyOnce) {
      readyOnce = true
      return
    }
    for (const [name, s] of schedulers) {
      upsertScheduler(name, s.intervalMs, s.data).catch((err) =>
        options.logger.warn({ err, job_name: name }, 'periodic job not registered again after reconnect'),
      )
    }
  })
  const has = async (id: string) => LIVE_STATES.includes(await queue.getJobState(id))
  /**
   * BullMQ ignores an add whose id it still holds, even a job that failed for good (kept in the failed set):
   * remove such a finished job so the id can run again, as on the inline runner. True when a live job has it.
   */
  const liveOrFreed = async (id: string) => {
    const state = await queue.getJobState(id)
    if (LIVE_STATES.includes(state)) return true
    if (state !== 'unknown') await (await queue.getJob(id))?.remove({ removeChildren: true })
    return false
  }
  let worker: Worker | undefined
  // BullMQ does not close a connection it was given: the runner closes the worker's own
  const workerConnection = connection.duplicate()
  return {
    kind: 'bullmq',
    async enqueue(name, data, opts = {}) {
      validateJobId(opts.jobId)
      if (opts.jobId && (await liveOrFreed(opts.jobId))) return
      await queue.add(name, data, {
        ...jobOptions(opts.jobId, opts.attempts),
        ...(opts.delayMs ? { delay: opts.delayMs } : {}),
      })
    },
    async enqueueFlow(flow) {
      for (const job of [flow, ...flow.children]) validateJobId(job.jobId)
      if (await liveOrFreed(flow.jobId)) return
      await flows.add({
        name: flow.name,
        queueName: QUEUE_NAME,
        data: flow.data,
        opts: jobOptions(flow.jobId),
        children: flow.children.map((child) => ({
          name: child.name,
          queueName: QUEUE_NAME,
          data: child.data,
          opts: { ...jobOptions(child.jobId), failParentOnFailure: true },
        })),
      })
    },
    has,
    async every(name, intervalMs, data) {
      schedulers.set(name, { intervalMs, data })
      await upsertScheduler(name, intervalMs, data)
    },
    async start() {
      worker = new Worker(
        QUEUE_NAME,
        async (job) => {
          const processor = processors[job.name]
          if (!processor) throw new UnrecoverableError(`no processor for job ${job.name}`)
          return processor({
            id: job.id ?? '',
            name: job.name,
            data: job.data,
            attemptsMade: job.attemptsMade,
            attempts: job.opts.attempts ?? 1,
          })
        },
        {
          connection: workerConnection,
          prefix,
          concurrency: options.concurrency ?? 1,
          lockDuration: lockMs,
          stalledInterval: Math.max(1_000, Math.floor(lockMs / 3)),
          // a job whose worker died is retried; a day shard may meet several crashes in a row
          maxStalledCount: 10,
        },
      )
      worker.on('failed', (job, err) => {
        options.logger.error(
          { err, job_id: job?.id, job_name: job?.name, attempts_made: job?.attemptsMade },
          'job failed',
        )
      })
      await worker.waitUntilReady()
    },
    async idle(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const counts = await queue.getJobCounts('waiting', 'active', 'prioritized', 'waiting-children')
        if (Object.values(counts).every((n) => n === 0)) return
        if (Date.now() > deadline)
          throw new Error(`bullmq queue did not go idle in time: ${JSON.stringify(counts)}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    },
    async failed() {
      const jobs = await queue.getFailed(0, 1000)
      return jobs.map((j) => ({
        id: j.id ?? '',
        name: j.name,
        error: j.failedReason,
        attemptsMade: j.attemptsMade,
      }))
    },
    async counts() {
      return (await queue.getJobCounts(...QUEUE_STATES)) as QueueCounts
    },
    async close() {
      await worker?.close()
      await flows.close()
      await queue.close()
      await workerConnection.quit()
      await connection.quit()
    },
  }
}
