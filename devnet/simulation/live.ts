/**
 * The simulator's work queue and live loop: `runDays`, `minePending` and the live timers all run through one
 * serial queue, so days and blocks are mined one at a time; `stop` ends live mode and a `runDays` in flight
 * after its current day.
 */
import type { MinedBlock } from '../blocks.ts'
import { runDay } from './day.ts'
import { mine } from './ledger.ts'
import type { DaySummary, SimulationContext } from './state.ts'

/**
 * Waits, before a day is simulated, until the chain's reader is close enough to `head` (the latest block); ends
 * early when `signal` aborts (the simulator stops). See `SimulationRunner.setPace`.
 */
export type DayPace = (head: bigint, signal: AbortSignal) => Promise<void>

/** Settings of live mode. */
export interface LiveOptions {
  /** wall-clock milliseconds between simulated days; 0 = no new days, only mine others' transactions */
  dayIntervalMs?: number
  /** wall-clock milliseconds between checks for others' pending transactions (default 1000) */
  blockIntervalMs?: number
}

/** The serialized operations of a simulator (see the file comment). */
export interface SimulationRunner {
  /** Simulates the next `n` days (each ends with its report block); `onDay` hears of each day mined. */
  runDays(n: number, onDay?: (summary: DaySummary) => void): Promise<DaySummary[]>
  /** Mines the pending transactions of others (e.g. the service's allowlist writer), if any. */
  minePending(): Promise<MinedBlock | undefined>
  /** Adds a day every `dayIntervalMs` and mines others' transactions every `blockIntervalMs`. */
  startLive(options?: LiveOptions): void
  /** Stops live mode (and a `runDays` in flight after its current day) and waits for the work in flight. */
  stop(): Promise<void>
  /**
   * Makes every later day wait for `pace` first (undefined: days run freely). A devnet whose node keeps only the
   * state of its latest blocks (anvil `--prune-history`) paces its days by its follower, so that every block
   * the follower still has to read keeps its state.
   */
  setPace(pace: DayPace | undefined): void
  /** whether live mode's timers are running */
  live(): boolean
  /** the error that stopped live mode, if any */
  error(): Error | undefined
}

/**
 * Creates the work queue and live loop over a simulation context.
 *
 * @example
 * const runner = createSimulationRunner(ctx)
 * await runner.runDays(30)
 * runner.startLive({ dayIntervalMs: 5_000 })
 */
export function createSimulationRunner(ctx: SimulationContext): SimulationRunner {
  const { builder, timeline, logger, counts } = ctx
  let liveError: Error | undefined
  let queue: Promise<unknown> = Promise.resolve()
  let dayTimer: NodeJS.Timeout | undefined
  let blockTimer: NodeJS.Timeout | undefined
  let dayQueued = false
  /** set by stop(): a runDays in flight ends after its current day */
  let stopping = false
  let blockQueued = false
  let pace: DayPace | undefined
  const stopped = new AbortController()

  /** The next day, once the pace allows it; undefined when the simulator stopped meanwhile. */
  const pacedDay = async (): Promise<DaySummary | undefined> => {
    if (pace) await pace(builder.lastBlockNumber(), stopped.signal)
    if (stopping) return undefined
    return runDay(ctx)
  }

  const enqueue = <T>(work: () => Promise<T>): Promise<T> => {
    const result = queue.then(work)
    queue = result.catch(() => undefined)
    return result
  }

  const minePendingNow = async (): Promise<MinedBlock | undefined> => {
    if ((await builder.pendingCount()) === 0) return undefined
    const ceiling = (timeline.activityTimes(ctx.nextDay)[0] as bigint) - 1n
    let timestamp = builder.lastTimestamp() + 12n
    if (timestamp > ceiling) timestamp = builder.lastTimestamp() + 1n
    if (timestamp > ceiling) return undefined
    const [block] = await mine(ctx, [], timestamp)
    return block
  }

  const stopTimers = () => {
    if (dayTimer) clearInterval(dayTimer)
    if (blockTimer) clearInterval(blockTimer)
    dayTimer = undefined
    blockTimer = undefined
  }

  const failLive = (error: unknown) => {
    liveError = error instanceof Error ? error : new Error(String(error))
    stopTimers()
    logger?.error({ err: liveError }, 'devnet simulator stopped after an error')
  }

  return {
    runDays(n, onDay) {
      return enqueue(async () => {
        const started = performance.now()
        const summaries: DaySummary[] = []
        for (let i = 0; i < n && !stopping; i++) {
          const summary = await pacedDay()
          if (!summary) break
          summaries.push(summary)
          onDay?.(summary)
        }
        const last = summaries[summaries.length - 1]
        if (last) {
          logger?.info(
            {
              days: n,
              last_date: last.date,
              report_block: Number(last.reportBlock),
              transactions: counts.transactions,
              duration_ms: Math.round(performance.now() - started),
            },
            'devnet days simulated',
          )
        }
        return summaries
      })
    },
    minePending: () => enqueue(minePendingNow),
    startLive(live = {}) {
      if (dayTimer || blockTimer) return
      const dayIntervalMs = live.dayIntervalMs ?? 5_000
      blockTimer = setInterval(() => {
        if (blockQueued) return
        blockQueued = true
        enqueue(minePendingNow)
          .catch(failLive)
          .finally(() => {
            blockQueued = false
          })
      }, live.blockIntervalMs ?? 1_000)
      blockTimer.unref()
      if (dayIntervalMs > 0) {
        dayTimer = setInterval(() => {
          if (dayQueued) return
          dayQueued = true
          enqueue(async () => {
            const summary = await pacedDay()
            if (!summary) return
            logger?.info(
              { day: summary.day, date: summary.date, report_block: Number(summary.reportBlock) },
              'devnet day simulated',
            )
          })
            .catch(failLive)
            .finally(() => {
              dayQueued = false
            })
        }, dayIntervalMs)
        dayTimer.unref()
      }
    },
    setPace(next) {
      pace = next
    },
    async stop() {
      stopping = true
      stopped.abort()
      stopTimers()
      await queue
    },
    live: () => dayTimer !== undefined || blockTimer !== undefined,
    error: () => liveError,
  }
}
