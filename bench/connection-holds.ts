import { PerformanceObserver } from 'node:perf_hooks'
import type { Db } from '../db/index.ts'

/** One hold of a pooled connection: from acquired to released, with what ran on it. */
interface Hold {
  requested: number
  acquired: number
  /** the first statement's label (a transaction: its first statement after BEGIN) */
  label: string
  statements: number
}

/** Holds of one label: how long they waited for the connection and how long they kept it (ms). */
export interface HoldStats {
  holds: number
  statements: number
  wait_p50_ms: number
  wait_p99_ms: number
  wait_max_ms: number
  hold_total_ms: number
  hold_p99_ms: number
  hold_max_ms: number
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0)

/** A statement's label: its verb and first table, without values (e.g. `insert into "wallet_records"`). */
function statementLabel(sql: string): string {
  const text = sql.replace(/\s+/g, ' ').trim().toLowerCase()
  const verb =
    /^(select|insert into|update|delete from|with|begin|commit|rollback|savepoint|release|create|drop)/.exec(
      text,
    )?.[1]
  const table = /(?:from|into|update|table) ("?[a-z_.]+"?)/.exec(text)?.[1]
  return `${verb ?? text.slice(0, 20)}${table ? ` ${table}` : ''}`
}

/**
 * Records every hold of a knex pool's connections (PGlite has one: every statement queues for it): how long each
 * waited to get a connection and how long it kept it, by the label of its first statement. For the embedded
 * benchmark: which statements hold the database while a day computes, and how long the API's reads wait.
 *
 * @example
 * const holds = traceConnectionHolds(db)
 * // ... run the day under load
 * console.log(holds.stats())
 */
export function traceConnectionHolds(db: Db) {
  const client = db.client as {
    acquireConnection(): Promise<unknown>
    releaseConnection(connection: unknown): Promise<unknown>
  }
  const acquire = client.acquireConnection.bind(client)
  const release = client.releaseConnection.bind(client)
  const open = new Map<unknown, Hold>()
  const done: (Hold & { released: number })[] = []
  let recording = false
  client.acquireConnection = async () => {
    const requested = performance.now()
    const connection = await acquire()
    open.set(connection, { requested, acquired: performance.now(), label: '', statements: 0 })
    return connection
  }
  client.releaseConnection = async (connection: unknown) => {
    const hold = open.get(connection)
    open.delete(connection)
    if (hold && recording) done.push({ ...hold, released: performance.now() })
    return release(connection)
  }
  db.on('query', (q: { sql: string }) => {
    // PGlite: one connection, so the open hold is the one running the statement
    for (const hold of open.values()) {
      hold.statements += 1
      const label = statementLabel(q.sql)
      if (hold.label === '' || (hold.label === 'begin' && hold.statements === 2)) hold.label = label
    }
  })
  return {
    /** Starts (or restarts) recording. */
    start() {
      done.length = 0
      recording = true
    },
    /** Stops recording and returns the holds by label, longest total first. */
    stats(): Record<string, HoldStats> {
      recording = false
      const byLabel = new Map<string, (Hold & { released: number })[]>()
      for (const hold of done) byLabel.set(hold.label, [...(byLabel.get(hold.label) ?? []), hold])
      const out: [string, HoldStats][] = []
      for (const [label, holds] of byLabel) {
        const waits = holds.map((h) => h.acquired - h.requested).sort((a, b) => a - b)
        const kept = holds.map((h) => h.released - h.acquired).sort((a, b) => a - b)
        out.push([
          label,
          {
            holds: holds.length,
            statements: holds.reduce((n, h) => n + h.statements, 0),
            wait_p50_ms: Math.round(percentile(waits, 50)),
            wait_p99_ms: Math.round(percentile(waits, 99)),
            wait_max_ms: Math.round(waits.at(-1) ?? 0),
            hold_total_ms: Math.round(kept.reduce((n, ms) => n + ms, 0)),
            hold_p99_ms: Math.round(percentile(kept, 99)),
            hold_max_ms: Math.round(kept.at(-1) ?? 0),
          },
        ])
      }
      return Object.fromEntries(out.sort((a, b) => b[1].hold_total_ms - a[1].hold_total_ms))
    },
  }
}

/**
 * Records garbage-collection pauses until `stop()`: how many, their total and longest, and how many lasted 50 ms
 * or more (a pause stops the event loop as a long statement does).
 *
 * @example
 * const gc = gcPauses()
 * // ... run the day
 * console.log(gc.stop()) // { pauses: 812, total_ms: 2140, max_ms: 96, over_50_ms: 9 }
 */
export function gcPauses() {
  const durations: number[] = []
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) durations.push(entry.duration)
  })
  observer.observe({ entryTypes: ['gc'] })
  return {
    stop() {
      observer.disconnect()
      return {
        pauses: durations.length,
        total_ms: Math.round(durations.reduce((n, ms) => n + ms, 0)),
        max_ms: Math.round(Math.max(0, ...durations)),
        over_50_ms: durations.filter((ms) => ms >= 50).length,
      }
    },
  }
}
