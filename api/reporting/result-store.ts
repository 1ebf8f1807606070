import type { ReportDay } from '../../db/repos/reports.ts'

/**
 * The identity of a day's visible version: results cached under it are valid while it is visible.
 *
 * @example
 * dayKey(day) // '1:10:2:ab12…' (chain, epoch, visible version, content hash)
 */
export function dayKey(day: ReportDay): string {
  let key = dayKeys.get(day)
  if (key === undefined) {
    key = `${day.chain_id}:${day.report_epoch}:${day.visible_version}:${day.content_hash ?? ''}`
    dayKeys.set(day, key)
  }
  return key
}
const dayKeys = new WeakMap<ReportDay, string>()

/** Results kept by the day keys they depend on (joined by '|'), least recently used evicted first. */
export interface ResultStore {
  /** The results held under `keys`, now the most recently used (one touch for any number of lookups). */
  entriesOf(keys: string): Map<string, unknown> | undefined
  /** One result held under `keys` (undefined: not held), now the most recently used. */
  get(keys: string, key: string): unknown
  /** Holds a result under `keys`; past `maxEntries`, the least recently used are dropped. */
  set(keys: string, key: string, value: unknown): void
  /** Drops every result depending on a day that is not among the computed `days` in its version. */
  invalidate(days: readonly ReportDay[]): void
}

/**
 * The reporting reads' result memory (api/report-cache.ts): at most `maxEntries` results in all.
 * Hand-written, not lru-cache (issue 25, `npx tsx bench/result-store.ts`, docs/decisions.md): grouped by day
 * versions, a 1,000-address read touches its group once (25-40 µs vs 460-700 µs per read on lru-cache) and
 * dropping versions gone visits the groups (30-46 µs vs 11-15 ms of scanning 20,000 keys, once a second).
 *
 * @example
 * const store = createResultStore(20_000)
 * store.set(dayKey(day), 'protocol', row)
 */
export function createResultStore(maxEntries: number): ResultStore {
  // results by the day keys they depend on (joined by '|'), least recently used first
  const results = new Map<string, Map<string, unknown>>()
  let size = 0
  // the group used last, already last in `results`: moved again, a Map's delete and set fill its table with
  // holes it rehashes into a new one (an allocation per read of the same day, measured in bench:api)
  let lastUsed: string | undefined

  function invalidate(days: readonly ReportDay[]) {
    const live = new Set(days.filter((d) => d.status === 'computed').map(dayKey))
    for (const [keys, entries] of results) {
      if (keys.split('|').every((k) => live.has(k))) continue
      size -= entries.size
      results.delete(keys)
    }
    lastUsed = undefined
  }

  function entriesOf(keys: string): Map<string, unknown> | undefined {
    const entries = results.get(keys)
    if (!entries) return undefined
    if (keys !== lastUsed) {
      // most recently used last
      results.delete(keys)
      results.set(keys, entries)
      lastUsed = keys
    }
    return entries
  }

  function get(keys: string, key: string): unknown {
    return entriesOf(keys)?.get(key)
  }

  function set(keys: string, key: string, value: unknown) {
    let entries = results.get(keys)
    if (!entries) {
      entries = new Map()
      results.set(keys, entries)
      lastUsed = keys
    }
    if (!entries.has(key)) size += 1
    entries.set(key, value)
    // evict from the least recently used days
    for (const [k, old] of results) {
      if (size <= maxEntries) break
      for (const oldKey of old.keys()) {
        if (size <= maxEntries) break
        old.delete(oldKey)
        size -= 1
      }
      if (old.size === 0) {
        results.delete(k)
        if (k === lastUsed) lastUsed = undefined
      }
    }
  }

  return { entriesOf, get, set, invalidate }
}
