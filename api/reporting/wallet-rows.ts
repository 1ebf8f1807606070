import { groupBy } from '../../common/group.ts'
import type { Repos } from '../../db/repos/index.ts'
import type { ReportDay, WalletRecordRow } from '../../db/repos/reports.ts'
import type { DaySnapshots } from './day-snapshots.ts'
import { dayKey, type ResultStore } from './result-store.ts'

/** Wallet records on days, with the days they are on (a day whose version went away: its new version). */
export type WalletRows = { days: ReportDay[]; rows: WalletRecordRow[] }

/** What the wallet record reads use: the store, the result memory, the days, and the reads' instant. */
export interface WalletRowsDeps {
  repos: Repos
  store: ResultStore
  snapshots: DaySnapshots
  now: () => number
  /** The reads' `as_of` (undefined: the visible days, which a read may find superseded). */
  asOf: Date | undefined
}

/**
 * The hot path: one address whose records on computed days are all held (else undefined).
 *
 * @example
 * heldWalletRows(store, [day], ['0xab…']) // { days: [day], rows: [row] } or undefined
 */
export function heldWalletRows(
  store: ResultStore,
  days: readonly ReportDay[],
  addresses: readonly string[],
): WalletRows | undefined {
  if (addresses.length !== 1) return undefined
  const address = addresses[0] as string
  const rows: WalletRecordRow[] = []
  for (const day of days) {
    const hit = day.status === 'computed' ? store.get(dayKey(day), address) : undefined
    if (hit === undefined) return undefined
    if (hit !== null) rows.push(hit as WalletRecordRow)
  }
  return { days: [...days], rows }
}

/**
 * The records of `addresses` on `days` (by day, then in the order of `addresses`): held ones from the
 * store, the rest in one round trip and kept (on computed days). When a day's version is no longer
 * visible, the days are re-read and the read retried (twice at most).
 *
 * @example
 * const { days: onDays, rows } = await readWalletRows(deps, days, ['0xab…', '0xcd…'])
 */
export async function readWalletRows(
  deps: WalletRowsDeps,
  days: readonly ReportDay[],
  addresses: readonly string[],
): Promise<WalletRows> {
  const { repos, store, snapshots, now, asOf } = deps
  let current = [...days]
  for (let attempt = 0; ; attempt++) {
    // per day, each address's held row (null: no record) or undefined (not held), taken now: eviction
    // while the missing ones are read must not lose them
    const found = current.map((day) => {
      const entries = day.status === 'computed' ? store.entriesOf(dayKey(day)) : undefined
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
        const s = await snapshots.snapshotOf(now())
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
          if (keys) store.set(keys, address, row)
        })
      })
    }
    const rows: WalletRecordRow[] = []
    for (const hits of found) for (const row of hits) if (row) rows.push(row)
    return { days: current, rows }
  }
}
