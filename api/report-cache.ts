import type { Repos } from '../db/repos/index.ts'
import type { ReportDay } from '../db/repos/reports.ts'
import { createDaySnapshots, type DaySnapshot } from './reporting/day-snapshots.ts'
import { createResultStore, dayKey } from './reporting/result-store.ts'
import { heldWalletRows, readWalletRows, type WalletRows } from './reporting/wallet-rows.ts'

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

/**
 * Creates the reads over one repository set (use `reportReads(repos)`: one per app): the days
 * (reporting/day-snapshots.ts), the result memory (reporting/result-store.ts) and the wallet record reads
 * over both (reporting/wallet-rows.ts), behind the methods below.
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
  const now = options.now ?? Date.now
  const store = createResultStore(options.maxEntries ?? REPORT_CACHE_MAX_ENTRIES)
  const snapshots = createDaySnapshots({
    readDays: () => (asOf === undefined ? repos.reports.visibleDays() : repos.reports.daysAsOf(asOf)),
    ttlMs: options.ttlMs ?? REPORT_DAYS_TTL_MS,
    now,
    onRead: (days) => store.invalidate(days),
  })
  const { snapshotOf } = snapshots
  const rowsDeps = { repos, store, snapshots, now, asOf }
  const inFlight = new Map<string, Promise<WalletRows>>()

  function between(s: DaySnapshot, from: string, to: string): ReportDay[] {
    return s.days.filter((d) => d.date >= from && d.date <= to)
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
      const hit = store.get(keys, key)
      if (hit !== undefined) return hit as T
      const value = await load()
      if (value !== undefined) store.set(keys, key, value)
      return value
    },

    /**
     * `walletRows` of one date answered from memory alone, with no promise (the hot path of a read of one
     * address): undefined unless the days held are fresh, the date has a computed report and the records
     * of `addresses` on it are held.
     */
    heldWalletRows(date: string, addresses: readonly string[]): WalletRows | undefined {
      const day = snapshots.fresh()?.byDate.get(date)
      return day && heldWalletRows(store, [day], addresses)
    },

    /**
     * The records of `addresses` on `days` (by day, then in the order of `addresses`; an address without a
     * record that day has no row): cached per (day version,
     * address) on computed days, the rest in one round trip. When a day's version is no longer visible,
     * the days are re-read and the read retried: the answer is on `days` as returned.
     */
    walletRows(days: readonly ReportDay[], addresses: readonly string[]): Promise<WalletRows> {
      const held = heldWalletRows(store, days, addresses)
      if (held) return Promise.resolve(held)
      // identical concurrent reads of computed days share one read (a cold cache under load)
      if (days.length === 0 || days.some((d) => d.status !== 'computed'))
        return readWalletRows(rowsDeps, days, addresses)
      const key = `${days.map(dayKey).join('|')}#${addresses.join(',')}`
      const pending = inFlight.get(key)
      if (pending) return pending
      const read = readWalletRows(rowsDeps, days, addresses).finally(() => inFlight.delete(key))
      inFlight.set(key, read)
      return read
    },
  }
}
/** The reporting reads of one app (or of one request's `as_of`). */
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
