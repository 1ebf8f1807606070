import { flushLogger, type Logger } from './logger.ts'

/** Closes registered resources in reverse order of registration. */
export interface Shutdown {
  /** Registers a closer; later registrations close first. */
  add(name: string, close: () => Promise<void> | void): void
  /** Runs every closer once (errors are logged, not thrown), then waits for the logger's lines to be written. */
  run(reason?: string): Promise<void>
  /** Installs SIGINT/SIGTERM handlers that run the registry and exit. */
  installSignalHandlers(): void
}

/**
 * Creates a shutdown registry.
 *
 * @example
 * const shutdown = createShutdown(logger)
 * shutdown.add('db', () => db.destroy())
 * shutdown.installSignalHandlers()
 */
export function createShutdown(logger: Logger): Shutdown {
  const closers: { name: string; close: () => Promise<void> | void }[] = []
  let running: Promise<void> | undefined

  const run = (reason = 'shutdown'): Promise<void> => {
    if (running) return running
    running = (async () => {
      logger.info({ reason }, 'shutdown started')
      for (const { name, close } of [...closers].reverse()) {
        try {
          await close()
          logger.debug({ resource: name }, 'resource closed')
        } catch (err) {
          logger.error({ err, resource: name }, 'resource failed to close')
        }
      }
      logger.info({ reason }, 'shutdown finished')
      // the logger writes in batches: every line, these two included, is out before the process may exit
      await flushLogger(logger)
    })()
    return running
  }

  return {
    add(name, close) {
      closers.push({ name, close })
    },
    run,
    installSignalHandlers() {
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        process.once(signal, () => {
          void run(signal).then(() => process.exit(0))
        })
      }
    },
  }
}
