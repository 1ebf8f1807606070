import { type SharedCollector, sourceGauge } from './collector.ts'

/** Computed days taken into `lsreport_day_recent_wallets_per_second`. */
const RECENT_DAYS = 10

interface DayStatusRow {
  chain_id: number
  status: string
  n: string | number
}
interface LastDayRow {
  chain_id: number
  report_epoch: string
  wallets: number
  duration_ms: number
  computed_at: Date
}
interface RecentRow {
  chain_id: number
  wallets: string | number
  duration_ms: string | number
}

/** Days per status, the last computed day's duration and wallets/s, and wallets/s over the last days. */
export const dayCollector: SharedCollector = (scope) => {
  const load = scope.source('days', async () => {
    const [statuses, last, recent] = await Promise.all([
      scope.db.raw<{ rows: DayStatusRow[] }>(
        'select chain_id, status, count(*) as n from days group by chain_id, status',
      ),
      scope.db.raw<{ rows: LastDayRow[] }>(
        `select distinct on (chain_id) chain_id, report_epoch, wallets, duration_ms, computed_at
           from days where status = 'computed' and computed_at is not null and duration_ms is not null
          order by chain_id, computed_at desc`,
      ),
      scope.db.raw<{ rows: RecentRow[] }>(
        `select chain_id, sum(wallets) as wallets, sum(duration_ms) as duration_ms from (
           select chain_id, wallets, duration_ms,
                  row_number() over (partition by chain_id order by computed_at desc) as k
             from days where status = 'computed' and computed_at is not null and duration_ms is not null
         ) d where k <= ${RECENT_DAYS} group by chain_id`,
      ),
    ])
    return { statuses: statuses.rows, last: last.rows, recent: recent.rows }
  })
  sourceGauge(
    scope,
    {
      name: 'lsreport_days',
      help: 'Days (one per oracle report) by status: pending, computing, computed, failed',
      labelNames: ['chain_id', 'status'],
      load,
    },
    (v, set) => {
      for (const r of v.statuses) set({ chain_id: String(r.chain_id), status: r.status }, Number(r.n))
    },
  )
  const lastDay = (name: string, help: string, value: (r: LastDayRow) => number | undefined) =>
    sourceGauge(scope, { name, help, labelNames: ['chain_id'], load }, (v, set) => {
      for (const r of v.last) {
        const n = value(r)
        if (n !== undefined) set({ chain_id: String(r.chain_id) }, n)
      }
    })
  lastDay(
    'lsreport_day_last_duration_seconds',
    'Duration of the last computed day job (its run, all shards and the finalization)',
    (r) => r.duration_ms / 1000,
  )
  lastDay('lsreport_day_last_wallets', 'Wallets of the last computed day', (r) => r.wallets)
  lastDay('lsreport_day_last_wallets_per_second', 'Wallets per second of the last computed day', (r) =>
    r.duration_ms > 0 ? (r.wallets * 1000) / r.duration_ms : undefined,
  )
  lastDay('lsreport_day_last_report_epoch', 'Report epoch of the last computed day', (r) =>
    Number(r.report_epoch),
  )
  lastDay(
    'lsreport_day_last_computed_timestamp_seconds',
    'When the last day was computed (Unix time)',
    (r) => r.computed_at.getTime() / 1000,
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_day_recent_wallets_per_second',
      help: `Wallets per second over the last ${RECENT_DAYS} computed days`,
      labelNames: ['chain_id'],
      load,
    },
    (v, set) => {
      for (const r of v.recent) {
        const ms = Number(r.duration_ms)
        if (ms > 0) set({ chain_id: String(r.chain_id) }, (Number(r.wallets) * 1000) / ms)
      }
    },
  )
}
