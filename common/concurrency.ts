/**
 * Runs `work` on every item, at most `limit` at once, in item order of start. After a failure no further
 * item starts; the first failure is thrown once the items already started have settled.
 *
 * @example
 * await forEachConcurrently(blockNumbers, 8, async (n) => headers.set(n, await readHeader(n)))
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0
  let failure: { error: unknown } | undefined
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++] as T
      try {
        await work(item)
      } catch (error) {
        failure ??= { error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  if (failure) throw failure.error
}
