import fs from 'node:fs'
import { pino } from 'pino'
import { createBatchedDestination } from './log-destination.ts'

export type Logger = pino.Logger

/**
 * Creates the structured logger (pino, JSON lines, snake_case fields, past-tense messages). Lines are written
 * in batches by asynchronous writes, at most 100 ms after they were logged (`common/log-destination.ts`): a
 * request never waits on the disk or a full pipe (a synchronous write per line, before, cost the logged API
 * read 20-38 % of its rate in bench:api, and blocked the event loop for milliseconds while other work loaded
 * the disk). When lines still reach the destination (docs/operations.md "Logs"): a shutdown through the
 * registry (SIGINT/SIGTERM, `common/shutdown.ts`) waits for every line (`flushLogger`); any other exit, a
 * crash on an uncaught exception included, writes the buffered lines synchronously on the way out, and so
 * does a `fatal` line; a process killed outright (SIGKILL, the OOM killer) loses the lines of its last 100 ms.
 * A file destination is opened here, at once (a crash before an asynchronous open completed would lose what
 * was logged before it).
 *
 * @example
 * const logger = createLogger({ level: 'info' })
 * logger.info({ wallet_count: 3 }, 'day computed')
 */
export function createLogger(options: { level: string; destination?: number | string }): Logger {
  const fd =
    typeof options.destination === 'string'
      ? fs.openSync(options.destination, 'a')
      : (options.destination ?? 1)
  return pino(
    { level: options.level, base: { service: 'lsreport' }, timestamp: isoTime },
    createBatchedDestination(fd),
  )
}

let isoTimeMs = Number.NaN
let isoTimeField = ''
/**
 * pino's `stdTimeFunctions.isoTime` (the line's `"time"` field, ISO 8601 in UTC), its text made once per
 * millisecond: under load several lines fall in the same millisecond (formatting the date was ~1 % of the
 * logged API read's CPU, profiled with bench:api).
 *
 * @example
 * isoTime() // ',"time":"2026-11-27T16:20:00.123Z"'
 */
function isoTime(): string {
  const now = Date.now()
  if (now !== isoTimeMs) {
    isoTimeMs = now
    isoTimeField = `,"time":"${new Date(now).toISOString()}"`
  }
  return isoTimeField
}

/**
 * Resolves once every line logged so far is written to the destination (the batch in progress included);
 * never rejects (a destination that fails has nothing more to flush).
 *
 * @example
 * await flushLogger(logger) // then exit, or read the log file
 */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      logger.flush(() => resolve())
    } catch {
      resolve()
    }
  })
}
