import type { Knex } from 'knex'
import { isPglite } from './bulk.ts'

/** What a caller does when another holder runs the work: wait for it, or give up at once. */
export type WhenHeld = 'wait' | 'skip'

/** Runs work alone (see `createExclusive`); undefined when skipped because another holder runs it. */
export type RunAlone = <T>(work: () => Promise<T>, whenHeld: WhenHeld) => Promise<T | undefined>

/**
 * One run at a time of the work named `key` (two int4, as Postgres advisory locks take them) across every
 * process and within this one. On Postgres a transaction holds `pg_advisory_xact_lock(key)` while `work`
 * runs on other connections (a holder that dies loses the lock with its connection); PGlite serves one process
 * (its data directory is locked), so there the in-process queue alone decides.
 *
 * @example
 * const alone = createExclusive(db, [FOLLOWER_LOCK_KEY, chainId])
 * const result = await alone(() => ingest(), 'wait')
 */
export function createExclusive(db: Knex, key: readonly [number, number]): RunAlone {
  let tail: Promise<void> = Promise.resolve()
  let held = false
  return async <T>(work: () => Promise<T>, whenHeld: WhenHeld): Promise<T | undefined> => {
    if (held && whenHeld === 'skip') return undefined
    const previous = tail
    let release = () => {}
    tail = new Promise<void>((resolve) => {
      release = resolve
    })
    await previous
    held = true
    try {
      if (isPglite(db)) return await work()
      return await db.transaction(async (lockTx) => {
        if (whenHeld === 'wait') {
          await lockTx.raw('select pg_advisory_xact_lock(?, ?)', [...key])
          return work()
        }
        const [lock] = (await lockTx.raw('select pg_try_advisory_xact_lock(?, ?) as ok', [...key])).rows as {
          ok: boolean
        }[]
        return lock?.ok ? work() : undefined
      })
    } finally {
      held = false
      release()
    }
  }
}
