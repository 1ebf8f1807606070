import { type SharedCollector, sourceGauge } from './collector.ts'

interface ChangeRow {
  state: string
  retrying: boolean
  n: string | number
  oldest_seconds: string | number | null
}

/** The states `lsreport_allowlist_changes` always reports (0 when none). */
const STATES = ['pending', 'retrying', 'submitted', 'confirmed', 'failed', 'superseded'] as const

/**
 * The allowlist writer's changes by state (`retrying`: pending after a revert, waiting for their next try), the
 * age of the oldest change not landed yet (pending, retrying or submitted), and the wallets the chain still
 * allowlists although the platform paused or removed them (or their account): a paused customer who can still
 * stake is what the writer exists to prevent, so a non-zero value that lasts is an alert.
 */
export const allowlistCollector: SharedCollector = (scope) => {
  const load = scope.source('allowlist', async () => {
    const changes = await scope.db.raw<{ rows: ChangeRow[] }>(
      `select state, (state = 'pending' and error is not null) as retrying, count(*) as n,
              extract(epoch from now() - min(created_at)) as oldest_seconds
         from allowlist_changes group by 1, 2`,
    )
    const exposed = await scope.db.raw<{ rows: { n: string | number }[] }>(
      `select count(*) as n from wallets w join accounts a on a.id = w.account_id
        where w.allowlisted
          and (w.status in ('PAUSED', 'PENDING_REMOVAL', 'REMOVED') or a.status in ('PAUSED', 'REMOVED'))`,
    )
    return { changes: changes.rows, exposed: Number(exposed.rows[0]?.n ?? 0) }
  })
  sourceGauge(
    scope,
    {
      name: 'lsreport_allowlist_changes',
      help:
        'Allowlist changes by state: pending, retrying (a write reverted; tried again after a delay), submitted, ' +
        'confirmed, failed (for good), superseded',
      labelNames: ['state'],
      load,
    },
    ({ changes }, set) => {
      const by = new Map<string, number>(STATES.map((s) => [s, 0]))
      for (const r of changes) {
        const state = r.retrying ? 'retrying' : r.state
        by.set(state, (by.get(state) ?? 0) + Number(r.n))
      }
      for (const [state, n] of by) set({ state }, n)
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_allowlist_oldest_unlanded_seconds',
      help: 'Age of the oldest Allowlist change not landed yet (pending, retrying or submitted; 0 when none)',
      labelNames: [],
      load,
    },
    ({ changes }, set) => {
      const ages = changes
        .filter((r) => (r.state === 'pending' || r.state === 'submitted') && r.oldest_seconds !== null)
        .map((r) => Number(r.oldest_seconds))
      set({}, ages.length === 0 ? 0 : Math.max(...ages))
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_allowlist_exposed_wallets',
      help:
        'Wallets the chain still allowlists although the platform paused or removed them or their account ' +
        '(their change in flight, retrying or failed)',
      labelNames: [],
      load,
    },
    ({ exposed }, set) => set({}, exposed),
  )
}
