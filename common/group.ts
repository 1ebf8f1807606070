/**
 * Items grouped by a key in one pass, each group in the items' order (Map.groupBy, which Node 20 lacks).
 * For joining two lists by id: filtering the second list once per item of the first is quadratic.
 *
 * @example
 * const walletsOf = groupBy(wallets, (w) => w.account_id)
 * accounts.map((a) => ({ ...a, wallets: walletsOf.get(a.id) ?? [] }))
 */
export function groupBy<T, K>(items: Iterable<T>, keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>()
  for (const item of items) {
    const key = keyOf(item)
    const group = groups.get(key)
    if (group) group.push(item)
    else groups.set(key, [item])
  }
  return groups
}
