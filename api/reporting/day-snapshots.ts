import type { ReportDay } from '../../db/repos/reports.ts'

/** The days as read at one moment, by date too. */
export type DaySnapshot = { at: number; days: ReportDay[]; byDate: Map<string, ReportDay> }

/** The reporting reads' days (api/report-cache.ts): one read shared, reused for `ttlMs`. */
export interface DaySnapshots {
  /** The days, read again when older than ttlMs (or `after` a moment: a forced re-read). */
  snapshotOf(after?: number): Promise<DaySnapshot>
  /** The days held when still fresh (younger than ttlMs), with no promise; else undefined. */
  fresh(): DaySnapshot | undefined
}

/**
 * The days of the reporting reads over `readDays`; `onRead` sees every newer set of days read (the result
 * store drops what depended on versions gone).
 *
 * @example
 * const days = createDaySnapshots({ readDays: () => repos.reports.visibleDays(), ttlMs: 1000, now: Date.now, onRead })
 * const { byDate } = await days.snapshotOf()
 */
export function createDaySnapshots(options: {
  readDays: () => Promise<ReportDay[]>
  ttlMs: number
  now: () => number
  onRead: (days: ReportDay[]) => void
}): DaySnapshots {
  const { readDays, ttlMs, now, onRead } = options
  let snapshot: DaySnapshot | undefined
  let loading: { startedAt: number; promise: Promise<DaySnapshot> } | undefined

  function snapshotOf(after?: number): Promise<DaySnapshot> {
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
          onRead(days)
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

  function fresh(): DaySnapshot | undefined {
    if (!snapshot || now() - snapshot.at >= ttlMs) return undefined
    return snapshot
  }

  return { snapshotOf, fresh }
}
