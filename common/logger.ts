import { pino } from 'pino'

export type Logger = pino.Logger

/**
 * Creates the structured logger (pino, JSON lines, snake_case fields, past-tense messages).
 *
 * @example
 * const logger = createLogger({ level: 'info' })
 * logger.info({ wallet_count: 3 }, 'day computed')
 */
export function createLogger(options: { level: string; destination?: number | string }): Logger {
  return pino(
    { level: options.level, base: { service: 'lsreport' }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: options.destination ?? 1, sync: true }),
  )
}
