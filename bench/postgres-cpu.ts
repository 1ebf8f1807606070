/**
 * CPU used by the Postgres server on this machine, read from /proc: the benchmarks' measure of what the
 * database spent on their work (the server runs on the same machine as the benchmarks).
 */
import fs from 'node:fs'

const CLK_TCK = 100

/** CPU seconds used so far by each Postgres server process, by pid, with what it is. */
function postgresProcesses(
  database: string,
): Map<string, { kind: 'backend' | 'background'; seconds: number }> {
  const out = new Map<string, { kind: 'backend' | 'background'; seconds: number }>()
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (!stat.includes('(postgres)')) continue
      const title = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const seconds = (Number(fields[11]) + Number(fields[12])) / CLK_TCK
      if (title.includes(` ${database} `)) out.set(pid, { kind: 'backend', seconds })
      else if (/checkpointer|walwriter|background writer/.test(title))
        out.set(pid, { kind: 'background', seconds })
    } catch {
      // the process ended meanwhile
    }
  }
  return out
}

/**
 * CPU used by Postgres over a window: the backends connected to `database` (this benchmark's queries,
 * including connections opened or closed meanwhile: call `sample()` now and then) and the shared background
 * processes (checkpointer, WAL writer, background writer). Other databases' backends (other users) are left out.
 *
 * @example
 * const cpu = postgresCpuMeter('lsreport_bench_1')
 * // ... the measured work ...
 * cpu.total() // { backends: 3.2, background: 0.1 }
 */
export function postgresCpuMeter(database: string) {
  const start = postgresProcesses(database)
  const last = new Map(start)
  const sample = () => {
    for (const [pid, p] of postgresProcesses(database)) last.set(pid, p)
  }
  const total = () => {
    sample()
    const out = { backends: 0, background: 0 }
    for (const [pid, p] of last) {
      const used = p.seconds - (start.get(pid)?.seconds ?? 0)
      if (p.kind === 'backend') out.backends += used
      else out.background += used
    }
    return { backends: Number(out.backends.toFixed(1)), background: Number(out.background.toFixed(1)) }
  }
  return { sample, total }
}

/**
 * CPU seconds used so far by each Postgres backend serving `database`, by pid, unrounded (none on PGlite: it
 * runs inside this process): for windows too short for `postgresCpuMeter`'s tenths of a second.
 */
export function postgresBackendSeconds(database: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const [pid, p] of postgresProcesses(database)) if (p.kind === 'backend') out.set(pid, p.seconds)
  return out
}

/** CPU seconds the backends of `database` used since `before` (a backend that ended meanwhile is not counted). */
export function postgresCpuSince(database: string, before: Map<string, number>): number {
  let seconds = 0
  for (const [pid, now] of postgresBackendSeconds(database)) seconds += now - (before.get(pid) ?? 0)
  return seconds
}
