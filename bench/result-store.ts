/**
 * Benchmark (issue 25): the reporting reads' result store (api/reporting/result-store.ts, hand-written, two
 * levels: results grouped by the day versions they depend on) against the same store on lru-cache (one entry
 * per (day versions, key), a day's results dropped by scanning the keys). Prints ns per operation (median of
 * 7 runs) for the operations the API does, and writes bench/results/result-store.json. The figures behind
 * keeping the hand-written store are in docs/decisions.md.
 *
 *   npx tsx bench/result-store.ts
 */
import fs from 'node:fs'
import path from 'node:path'
import { LRUCache } from 'lru-cache'
import { createResultStore, dayKey } from '../api/reporting/result-store.ts'
import type { ReportDay } from '../db/repos/reports.ts'

const MAX_ENTRIES = 20_000 // REPORT_CACHE_MAX_ENTRIES
const days = Array.from(
  { length: 366 },
  (_, i) =>
    ({
      chain_id: 1,
      report_epoch: String(1_000 + i),
      visible_version: 1,
      content_hash: 'ab'.repeat(16),
      status: 'computed',
      date: `day-${i}`,
    }) as unknown as ReportDay,
)
const addresses = Array.from({ length: 1_000 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`)

/** The store on lru-cache: one entry per (day keys, key); invalidation scans every key. */
function createLruStore(max: number) {
  const cache = new LRUCache<string, object>({ max })
  const entry = (keys: string, key: string) => `${keys}\u0000${key}`
  return {
    get: (keys: string, key: string) => cache.get(entry(keys, key)),
    set: (keys: string, key: string, value: object) => void cache.set(entry(keys, key), value),
    invalidate(computed: readonly ReportDay[]) {
      const live = new Set(computed.filter((d) => d.status === 'computed').map(dayKey))
      const alive = new Map<string, boolean>()
      for (const full of cache.keys()) {
        const keys = full.slice(0, full.indexOf('\u0000'))
        let ok = alive.get(keys)
        if (ok === undefined) {
          ok = keys.split('|').every((k) => live.has(k))
          alive.set(keys, ok)
        }
        if (!ok) cache.delete(full)
      }
    },
  }
}

let found = 0
const use = (value: unknown) => {
  if (value !== undefined) found++
}
const figures: Record<string, number> = {}
function time(name: string, ops: number, run: () => void): void {
  for (let i = 0; i < 3; i++) run()
  const perOp: number[] = []
  for (let r = 0; r < 7; r++) {
    const start = process.hrtime.bigint()
    run()
    perOp.push(Number(process.hrtime.bigint() - start) / ops)
  }
  perOp.sort((a, b) => a - b)
  figures[name] = Math.round(perOp[3]!)
  console.log(`${name.padEnd(62)} ${figures[name]!.toLocaleString('en').padStart(12)} ns/op`)
}

const row = { address: 'x' }
const hand = createResultStore(MAX_ENTRIES)
const lru = createLruStore(MAX_ENTRIES)
// full: 1,000 addresses on each of the last 20 days
const recent = days.slice(-20).map(dayKey)
for (const keys of recent) {
  for (const address of addresses) {
    hand.set(keys, address, row)
    lru.set(keys, address, row)
  }
}
const latest = recent[recent.length - 1]!

const N = 200_000
time('hand-written: 1 address on 1 day', N, () => {
  for (let i = 0; i < N; i++) use(hand.get(latest, addresses[i % 1_000]!))
})
time('lru-cache:    1 address on 1 day', N, () => {
  for (let i = 0; i < N; i++) use(lru.get(latest, addresses[i % 1_000]!))
})
const M = 10_000
time('hand-written: 1 address on 20 days (a summary)', M, () => {
  for (let i = 0; i < M; i++) for (const keys of recent) use(hand.get(keys, addresses[i % 1_000]!))
})
time('lru-cache:    1 address on 20 days (a summary)', M, () => {
  for (let i = 0; i < M; i++) for (const keys of recent) use(lru.get(keys, addresses[i % 1_000]!))
})
const W = 200
time('hand-written: 1,000 addresses on 1 day (one read)', W, () => {
  for (let i = 0; i < W; i++) {
    const entries = hand.entriesOf(latest)!
    for (const address of addresses) use(entries.get(address))
  }
})
time('lru-cache:    1,000 addresses on 1 day (one read)', W, () => {
  for (let i = 0; i < W; i++) for (const address of addresses) use(lru.get(latest, address))
})
time('hand-written: invalidate, 20,000 held (each days re-read, <= 1/s)', 100, () => {
  for (let i = 0; i < 100; i++) hand.invalidate(days)
})
time('lru-cache:    invalidate, 20,000 held (each days re-read, <= 1/s)', 100, () => {
  for (let i = 0; i < 100; i++) lru.invalidate(days)
})
const S = 100_000
time('hand-written: set past the bound (eviction)', S, () => {
  for (let i = 0; i < S; i++) hand.set(dayKey(days[i % days.length]!), addresses[i % 1_000]!, row)
})
time('lru-cache:    set past the bound (eviction)', S, () => {
  for (let i = 0; i < S; i++) lru.set(dayKey(days[i % days.length]!), addresses[i % 1_000]!, row)
})

const out = path.join(import.meta.dirname, 'results', 'result-store.json')
fs.mkdirSync(path.dirname(out), { recursive: true })
fs.writeFileSync(
  out,
  `${JSON.stringify({ at: new Date().toISOString(), ns_per_op: figures, found }, null, 2)}\n`,
)
