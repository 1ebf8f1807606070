import fs from 'node:fs'
import { pino } from 'pino'

export type Logger = pino.Logger

/**
 * Lines are gathered until this many bytes (about 15 access lines) before a write, so a busy API writes a batch
 * at a time instead of one blocking write per request.
 */
const LOG_BATCH_BYTES = 4096
/** ... and written at the latest this long after they were logged, busy or not. */
const LOG_FLUSH_MS = 100

/**
 * Creates the structured logger (pino, JSON lines, snake_case fields, past-tense messages). Lines are written
 * asynchronously in batches (pino's SonicBoom destination, `sync: false`): the event loop never waits on the
 * disk or a full pipe (measured with bench:api: a synchronous write per request cost the logged read 38 % of
 * its rate, and far more while other work loaded the disk). What this costs, and when lines still reach the
 * destination (docs/operations.md "Logs"):
 * - a shutdown through the registry (SIGINT/SIGTERM, `common/shutdown.ts`) waits for every line (`flushLogger`);
 * - any other exit, a crash included (an uncaught exception or rejection), writes the buffered lines
 *   synchronously on the way out (pino's exit hook; `fatal` lines are written at once);
 * - a process killed outright (SIGKILL, the kernel's OOM killer, a native abort) loses the lines not yet
 *   written: those of its last LOG_FLUSH_MS while the destination keeps up (lines wait in memory, unbounded,
 *   while it does not: a full pipe or a stalled disk).
 *
 * @example
 * const logger = createLogger({ level: 'info' })
 * logger.info({ wallet_count: 3 }, 'day computed')
 */
export function createLogger(options: { level: string; destination?: number | string }): Logger {
  // a file is opened here, at once: lines logged before an asynchronous open completed would be lost by a
  // process that crashes first (the exit hook cannot write to a file not yet open)
  const dest =
    typeof options.destination === 'string'
      ? fs.openSync(options.destination, 'a')
      : (options.destination ?? 1)
  return pino(
    { level: options.level, base: { service: 'lsreport' }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination(process.env.TMP_A26_LOG_MODE === 'sync' ? { dest, sync: true } : { dest, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS }),
  )
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
