import { Gauge, type Registry } from 'prom-client'
import type { CollectorScope } from './collector.ts'

/** The shared sources of one registry: how collectors read them, and whether each answered its last read. */
export interface ScrapeSources {
  /** `CollectorScope.source`: a source read at most once per scrape, within the timeout. */
  source: CollectorScope['source']
  /** Per source: whether its last read answered (1), failed or timed out (0), or had nothing to say. */
  up: ReadonlyMap<string, () => Promise<number | undefined>>
}

/**
 * The shared sources of one registry, each read within `timeoutMs`: a source that fails or is slow yields
 * undefined (its series are left out) instead of holding the scrape.
 *
 * @example
 * const sources = createScrapeSources(2_000)
 * const rows = sources.source('days', () => db.raw('select ...'))
 */
export function createScrapeSources(timeoutMs: number): ScrapeSources {
  const up = new Map<string, () => Promise<number | undefined>>()
  const source = <T>(name: string, load: () => Promise<T | undefined>) => {
    let pending: { raw: Promise<T | undefined>; value: Promise<T | undefined> } | undefined
    const start = () => {
      // prom-client starts every collect() of a scrape in one tick: while a read is pending they share it,
      // and the next scrape reads again
      if (pending) return pending
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${name} took over ${timeoutMs} ms`)), timeoutMs)
        timer.unref()
      })
      const raw = Promise.race([load(), timeout]).finally(() => {
        clearTimeout(timer)
        pending = undefined
      })
      pending = { raw, value: raw.catch(() => undefined) }
      return pending
    }
    up.set(name, () =>
      start().raw.then(
        (v) => (v === undefined ? undefined : 1),
        () => 0,
      ),
    )
    return () => start().value
  }
  return { source, up }
}

/**
 * Registers `lsreport_metrics_source_up{source}`: 1 when a shared source answered this scrape in time, 0 when
 * it failed or timed out, absent when it had nothing to say.
 *
 * @example
 * registerSourceUp(registry, sources.up)
 */
export function registerSourceUp(registry: Registry, sources: ScrapeSources['up']): Gauge<'source'> {
  return new Gauge({
    name: 'lsreport_metrics_source_up',
    help: 'Whether a shared source answered this scrape in time (1) or failed or timed out (0)',
    labelNames: ['source'],
    registers: [registry],
    async collect() {
      const states = await Promise.all([...sources].map(async ([name, up]) => [name, await up()] as const))
      this.reset()
      for (const [name, up] of states) if (up !== undefined) this.set({ source: name }, up)
    },
  })
}
