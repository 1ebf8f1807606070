/**
 * `read` called at most once while it succeeds: every call shares its promise; a rejection is forgotten, so the
 * next call tries again (a secret file made meanwhile, a variable fixed by a restart).
 *
 * @example
 * const key = memoizeSuccess(() => signingKeySecret(config))
 * await key() // read once, then the same Buffer
 */
export function memoizeSuccess<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined
  return () => {
    pending ??= read().catch((err: unknown) => {
      pending = undefined
      throw err
    })
    return pending
  }
}
