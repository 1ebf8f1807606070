import type { SigningKeyRow } from '../../db/repos/index.ts'

/** How often an API process re-reads the key set (a new key is seen, and signs, within this). */
export const KEY_REFRESH_MS = 5_000

/**
 * Seconds a replaced key verifies beyond the token lifetime: processes may sign with it for up to
 * `KEY_REFRESH_MS` after it was replaced, and their clocks may differ from the database's by a few seconds.
 */
export const RETIREMENT_GRACE_SECONDS = 10

/** `current` signs (the newest key); `retiring` only verifies, until `retiresAt`; `retired` is trusted no more. */
export type KeyStatus = 'current' | 'retiring' | 'retired'

/** A stored key and when it stops verifying. */
export interface KeyState {
  row: SigningKeyRow
  /** Its successor's creation + token lifetime + grace: no token it signed lives longer. Null while current. */
  retiresAt: Date | null
}

/**
 * When each key retires, from the keys newest first: the newest is current; each other one stopped signing when
 * the next newer key was made, so it verifies for one token lifetime (plus `RETIREMENT_GRACE_SECONDS`) after.
 *
 * @example
 * const [current, previous] = keyStates(await repos.signingKeys.list(), 86_400)
 * previous?.retiresAt // current.row.created_at + 86410 s
 */
export function keyStates(rowsNewestFirst: readonly SigningKeyRow[], tokenTtlSeconds: number): KeyState[] {
  return rowsNewestFirst.map((row, i) => {
    const successor = i === 0 ? undefined : rowsNewestFirst[i - 1]
    const retiresAt = successor
      ? new Date(successor.created_at.getTime() + (tokenTtlSeconds + RETIREMENT_GRACE_SECONDS) * 1000)
      : null
    return { row, retiresAt }
  })
}

/**
 * A key's status at `nowMs`.
 *
 * @example
 * statusAt({ row, retiresAt: null }, Date.now()) // 'current'
 */
export function statusAt(state: KeyState, nowMs: number): KeyStatus {
  if (state.retiresAt === null) return 'current'
  return state.retiresAt.getTime() > nowMs ? 'retiring' : 'retired'
}
