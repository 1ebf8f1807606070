import type { Processor } from './runner.ts'

/** A job in flight in this process, as the watch sees it. */
export interface JobInFlight {
  id: string
  name: string
  /** When the run started (ms since the epoch). */
  startedAt: number
  /** Milliseconds since the run started. */
  runningMs: number
  /** Milliseconds since its last progress (its start, or its last `progress()` call). */
  idleMs: number
  /** True when `idleMs` is past the watch's bound. */
  stuck: boolean
}

/** Tracks the jobs this process runs, to tell a stuck one (served on the worker's /health, jobs/worker-health.ts). */
export interface JobWatch {
  /** The bound: a job in flight without progress for longer than this is stuck. */
  stuckAfterMs: number
  /** Wraps processors: each run is tracked from start to end, and given a `progress` to call as it advances. */
  wrap(processors: Record<string, Processor>): Record<string, Processor>
  /** The jobs in flight, the longest without progress first. */
  inFlight(): JobInFlight[]
}

/**
 * A watch over the jobs run in this process. A run counts as progressing when it starts and each time its
 * processor calls `job.progress()` (the follower does after every chunk it writes); one that goes
 * `stuckAfterMs` without either is stuck: waiting on a lock, a silent RPC or database connection, a
 * deadlock. The run stays tracked until its processor returns or throws, so a stuck job that finally
 * fails or completes clears itself.
 *
 * @example
 * const watch = createJobWatch({ stuckAfterMs: 300_000 })
 * const runner = createBullRunner(watch.wrap(jobs.processors), options)
 * watch.inFlight().filter((job) => job.stuck) // [{ id: 'repeat:every-sync:...', name: 'sync', idleMs: 301200, ... }]
 */
export function createJobWatch(options: { stuckAfterMs: number; now?: () => number }): JobWatch {
  const now = options.now ?? Date.now
  const runs = new Set<{ id: string; name: string; startedAt: number; progressAt: number }>()
  return {
    stuckAfterMs: options.stuckAfterMs,
    wrap(processors) {
      return Object.fromEntries(
        Object.entries(processors).map(([name, processor]): [string, Processor] => [
          name,
          async (job) => {
            const run = { id: job.id, name: job.name, startedAt: now(), progressAt: now() }
            runs.add(run)
            try {
              return await processor({
                ...job,
                progress: () => {
                  run.progressAt = now()
                  job.progress?.()
                },
              })
            } finally {
              runs.delete(run)
            }
          },
        ]),
      )
    },
    inFlight() {
      const at = now()
      return [...runs]
        .map((run) => ({
          id: run.id,
          name: run.name,
          startedAt: run.startedAt,
          runningMs: at - run.startedAt,
          idleMs: at - run.progressAt,
          stuck: at - run.progressAt > options.stuckAfterMs,
        }))
        .sort((a, b) => b.idleMs - a.idleMs)
    },
  }
}
