import { groupBy } from '../common/group.ts'
import type { Repos } from '../db/repos/index.ts'
import type { ReportDay, WalletRecordRow } from '../db/repos/reports.ts'

/**
 * The reporting reads' memory: the visible days (one small table, re-read at most every `ttlMs`) and the
 * immutable results of computed days. A computed day's records never change while its visible version
 * stays: results are keyed by (chain, epoch, visible version, content hash) and dropped as soon as a
 * re-read of the days shows another version. A day being recomputed (not `computed`) is never cached.
 *
 * Freshness: a newly published version (a recompute, a new day) is served within `ttlMs` of its
 * publication; a lookup that would answer 404, or a range reaching past the latest day held, re-reads them,
 * and a read that finds its version gone re-reads them and retries. Every response is one consistent
 * version (its ETag and X-Report-* headers name it).
 */

/** How long the visible days are reused before they are read again. */
export const REPORT_DAYS_TTL_MS = 1_000
/** At most this many cached results (wallet records count one each). */
export const REPORT_CACHE_MAX_ENTRIES = 20_000

type Snapshot = { at: number; days: ReportDay[]; byDate: Map<string, ReportDay> }

/** The identity of a day's visible version: results cached under it are valid while it is visible. */
export function dayKey(day: ReportDay): string {
  let key = dayKeys.get(day)
  if (key === undefined) {
    key = `${day.chain_id}:${day.report_epoch}:${day.visible_version}:${day.content_hash ?? ''}`
    dayKeys.set(day, key)
  }
  return key
}
const dayKeys = new WeakMap<ReportDay, string>()

/**
 * Creates the reads over one repository set (use `reportReads(repos)`: one per app).
 *
 * @example
 * const reads = createReportReads(repos)
 * const day = await reads.day('2026-05-03') // undefined: no computed report
 * const row = await reads.cached([day], 'protocol', () => repos.reports.protocolRecord(day))
 */
export function createReportReads(
  repos: Repos,
  options: {
    ttlMs?: number
    maxEntries?: number
    now?: () => number
    /**
     * Where the days come from: the visible ones (default), or (`asOf`) those visible at an instant, whose
     * superseded versions keep their records: a version that is no longer visible is still the answer.
     */
    asOf?: Date
  } = {},
) {
  const asOf = options.asOf
  const readDays = () => (asOf === undefined ? repos.reports.visibleDays() : repos.reports.daysAsOf(asOf))
  const ttlMs = options.ttlMs ?? REPORT_DAYS_TTL_MS
  const maxEntries = options.maxEntries ?? REPORT_CACHE_MAX_ENTRIES
  const now = options.now ?? Date.now
  let snapshot: Snapshot | undefined
  let loading: { startedAt: number; promise: Promise<Snapshot> } | undefined
  // results by the day keys they depend on (joined by '|'), least recently used first
  const results = new Map<string, Map<string, unknown>>()
  let size = 0
  const inFlight = new Map<string, Promise<{ days: ReportDay[]; rows: WalletRecordRow[] }>>()

  function invalidate(days: readonly ReportDay[]) {
    const live = new Set(days.filter((d) => d.status === 'computed').map(dayKey))
    for (const [keys, entries] of results) {
      if (keys.split('|').every((k) => live.has(k))) continue
      size -= entries.size
      results.delete(keys)
    }
  }

  /** The visible days, read again when older than ttlMs (or `after` a moment: a forced re-read). */
  function snapshotOf(after?: number): Promise<Snapshot> {
    const t = now()
    if (snapshot && (after === undefined ? t - snapshot.at < ttlMs : snapshot.at >= after)) {
      return Promise.resolve(snapshot)
    }
    // join a read started no earlier than asked (a read started before a write may miss it)
    if (loading && loading.startedAt >= (after ?? t - ttlMs)) return loading.promise
    const startedAt = t
    const promise = readDays().then(
      (days) => {
        const next = { at: startedAt, days, byDate: new Map(days.map((d) => [d.date, d])) }
        if (!snapshot || startedAt >= snapshot.at) {
          snapshot = next
          invalidate(days)
        }
        if (loading?.promise === promise) loading = undefined
        return next
      },
      (err) => {
        if (loading?.promise === promise) loading = undefined
        throw err
      },
    )
    loading = { startedAt, promise }
    return promise
  }

  function between(s: Snapshot, from: string, to: string): ReportDay[] {
    return s.days.filter((d) => d.date >= from && d.date <= to)
  }

  /** The results held under `keys`, now the most recently used (one touch for any number of lookups). */
  function entriesOf(keys: string): Map<string, unknown> | undefined {
    const entries = results.get(keys)
    if (!entries) return undefined
    // most recently used last
    results.delete(keys)
    results.set(keys, entries)
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
      if (old.size === 0) results.delete(k)
    }
  }

  /** The hot path: one address whose records on computed days are all held (else undefined). */
  function heldRow(days: readonly ReportDay[], addresses: readonly string[]) {
    if (addresses.length !== 1) return undefined
    const address = addresses[0] as string
    const rows: WalletRecordRow[] = []
    for (const day of days) {
      const hit = day.status === 'computed' ? get(dayKey(day), address) : undefined
      if (hit === undefined) return undefined
      if (hit !== null) rows.push(hit as WalletRecordRow)
    }
    return { days: [...days], rows }
  }

  /** `walletRows` without the sharing of identical concurrent reads. */
  async function readRows(
    days: readonly ReportDay[],
    addresses: readonly string[],
  ): Promise<{ days: ReportDay[]; rows: WalletRecordRow[] }> {
    let current = [...days]
    for (let attempt = 0; ; attempt++) {
      // per day, each address's held row (null: no record) or undefined (not held), taken now: eviction
      // while the missing ones are read must not lose them
      const found = current.map((day) => {
        const entries = day.status === 'computed' ? entriesOf(dayKey(day)) : undefined
        return addresses.map((address) => entries?.get(address) as WalletRecordRow | null | undefined)
      })
      const missingDays = current.filter((_, i) => found[i]?.includes(undefined))
      if (missingDays.length > 0) {
        const missingAddresses = new Set<string>()
        for (const hits of found) {
          hits.forEach((hit, j) => {
            if (hit === undefined) missingAddresses.add(addresses[j] as string)
          })
        }
        const read = await repos.reports.walletRecordsOnDays(missingDays, [...missingAddresses])
        if (asOf === undefined && read.current.some((c) => !c) && attempt < 2) {
          // a version went away meanwhile: answer from the days as they are now
          const s = await snapshotOf(now())
          current = current.flatMap((d) => s.byDate.get(d.date) ?? [])
          continue
        }
        const readByDay = new Map(
          [...groupBy(read.rows, (row) => row.report_epoch)].map(([epoch, rows]) => [
            epoch,
            new Map(rows.map((row) => [row.address, row])),
          ]),
        )
        current.forEach((day, i) => {
          const hits = found[i] as (WalletRecordRow | null | undefined)[]
          if (!hits.includes(undefined)) return
          const keys = day.status === 'computed' ? dayKey(day) : undefined
          const byAddress = readByDay.get(day.report_epoch)
          // each address not held that day: its row as read (null: no record), kept for the next read
          hits.forEach((hit, j) => {
            if (hit !== undefined) return
            const address = addresses[j] as string
            const row = byAddress?.get(address) ?? null
            hits[j] = row
            if (keys) set(keys, address, row)
          })
        })
      }
      const rows: WalletRecordRow[] = []
      for (const hits of found) for (const row of hits) if (row) rows.push(row)
      return { days: current, rows }
    }
  }

  return {
    /** The report answering for `date`, or undefined (after re-reading the days) when none. */
    async day(date: string): Promise<ReportDay | undefined> {
      const hit = (await snapshotOf()).byDate.get(date)
      if (hit) return hit
      return (await snapshotOf(now())).byDate.get(date)
    },

    /**
     * The reports of every date of [from, to] with one, by date (re-read first when the range reaches past
     * the latest day held, or holds none: a newer day may have been computed since).
     */
    async between(from: string, to: string): Promise<ReportDay[]> {
      const s = await snapshotOf()
      const days = between(s, from, to)
      const latest = s.days[s.days.length - 1]
      if (days.length > 0 && latest !== undefined && to <= latest.date) return days
      return between(await snapshotOf(now()), from, to)
    },

    /** The first and latest reports (undefined when none is computed). */
    async bounds(): Promise<{ first: ReportDay; latest: ReportDay } | undefined> {
      let s = await snapshotOf()
      if (s.days.length === 0) s = await snapshotOf(now())
      const first = s.days[0]
      const latest = s.days[s.days.length - 1]
      return first && latest ? { first, latest } : undefined
    },

    /** Every visible day, by date (lots' conversion rates). */
    async all(): Promise<ReportDay[]> {
      return (await snapshotOf()).days
    },

    /**
     * A result that depends only on `days` (and `key`): cached while every day is computed and visible
     * in that version, else loaded each time.
     */
    async cached<T>(days: readonly ReportDay[], key: string, load: () => Promise<T>): Promise<T> {
      if (days.length === 0 || days.some((d) => d.status !== 'computed')) return load()
      const keys = days.map(dayKey).join('|')
      const hit = get(keys, key)
      if (hit !== undefined) return hit as T
      const value = await load()
      if (value !== undefined) set(keys, key, value)
      return value
    },

    /**
     * `walletRows` of one date answered from memory alone, with no promise (the hot path of a read of one
     * address): undefined unless the days held are fresh, the date has a computed report and the records
     * of `addresses` on it are held.
     */
    heldWalletRows(
      date: string,
      addresses: readonly string[],
    ): { days: ReportDay[]; rows: WalletRecordRow[] } | undefined {
      if (!snapshot || now() - snapshot.at >= ttlMs) return undefined
      const day = snapshot.byDate.get(date)
      return day && heldRow([day], addresses)
    },

    /**
     * The records of `addresses` on `days` (by day, then in the order of `addresses`; an address without a
     * record that day has no row): cached per (day version,
     * address) on computed days, the rest in one round trip. When a day's version is no longer visible,
     * the days are re-read and the read retried: the answer is on `days` as returned.
     */
    walletRows(
      days: readonly ReportDay[],
      addresses: readonly string[],
    ): Promise<{ days: ReportDay[]; rows: WalletRecordRow[] }> {
      const held = heldRow(days, addresses)
      if (held) return Promise.resolve(held)
      // identical concurrent reads of computed days share one read (a cold cache under load)
      if (days.length === 0 || days.some((d) => d.status !== 'computed')) return readRows(days, addresses)
      const key = `${days.map(dayKey).join('|')}#${addresses.join(',')}`
      const pending = inFlight.get(key)
      if (pending) return pending
      const read = readRows(days, addresses).finally(() => inFlight.delete(key))
      inFlight.set(key, read)
      return read
    },
  }
}
export type ReportReads = ReturnType<typeof createReportReads>

/**
 * The reporting reads as of an instant (a read's `as_of`): the days the restatement log says were visible
 * then, with their records (superseded versions keep theirs). One per request: nothing is shared or kept.
 */
export function reportReadsAsOf(repos: Repos, asOf: Date): ReportReads {
  return createReportReads(repos, { ttlMs: Number.POSITIVE_INFINITY, asOf })
}

const readsOf = new WeakMap<Repos, ReportReads>()
/** The reporting reads of a repository set: one per app (routes built over the same repos share it). */
export function reportReads(repos: Repos): ReportReads {
  let reads = readsOf.get(repos)
  if (!reads) {
    reads = createReportReads(repos)
    readsOf.set(repos, reads)
  }
  return reads
}
