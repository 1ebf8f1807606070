import { Gauge, type LabelValues, type Registry } from 'prom-client'
import type { QueueCounts } from '../common/queue.ts'
import type { Db } from '../db/index.ts'

/** Where the queue's counts come from: the inline runner in process, or BullMQ on Redis. */
export interface QueueCountsSource {
  counts(): Promise<QueueCounts>
}

/** What the shared-state collectors read. */
export interface CollectorScope {
  registry: Registry
  db: Db
  /** Blocks behind head the follower treats as final (its target is head - confirmations). */
  confirmations: number
  /** JSON-RPC URL: the chain's head is read from it at scrape time when set. */
  rpcUrl: () => string | undefined
  /** The queue's counts now; undefined when this process sees no queue. */
  queue: () => QueueCountsSource | undefined
  /**
   * A source read at most once per scrape (concurrent collect() calls share it), within the scrape timeout;
   * undefined when it failed or timed out (then `lsreport_metrics_source_up{source=name}` is 0).
   */
  source<T>(name: string, load: () => Promise<T | undefined>): () => Promise<T | undefined>
  /**
   * Whether per-tenant series may be shown (METRICS_TENANT_LABELS=1): off by default, a series labelled with a
   * tenant (`TENANT_LABELS`) is then not even registered (`sourceGauge` refuses it).
   */
  tenantLabels: boolean
}

/** Label names that identify a tenant: none is on a series unless METRICS_TENANT_LABELS=1. */
export const TENANT_LABELS: readonly string[] = ['org_id', 'client_id']

/**
 * One group of gauges computed at scrape time from the shared state. Adding a figure of the shared state is
 * one such function added to `SHARED_COLLECTORS` (`webhookDeliveriesCollector` is a short example).
 */
export type SharedCollector = (scope: CollectorScope) => void

/** The labelled values a gauge shows after a scrape, from its source's value. */
type Fill<T, L extends string> = (value: T, set: (labels: LabelValues<L>, n: number) => void) => void

/**
 * A gauge whose series are recomputed at every scrape from `load` (a `scope.source`); none when the source
 * failed. One labelled with a tenant (`TENANT_LABELS`) is refused (thrown) unless `scope.tenantLabels`: a
 * collector registers its per-tenant gauges only behind that setting.
 *
 * @example
 * sourceGauge(scope, { name: 'lsreport_queue_jobs', help: '...', labelNames: ['state'], load }, (counts, set) =>
 *   set({ state: 'waiting' }, counts.waiting ?? 0))
 */
export function sourceGauge<T, L extends string>(
  scope: CollectorScope,
  options: { name: string; help: string; labelNames: readonly L[]; load: () => Promise<T | undefined> },
  fill: Fill<T, L>,
): Gauge<L> {
  const tenant = options.labelNames.find((l) => TENANT_LABELS.includes(l))
  if (tenant !== undefined && !scope.tenantLabels) {
    throw new Error(`${options.name}: a series labelled ${tenant} needs METRICS_TENANT_LABELS=1`)
  }
  return new Gauge<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames,
    registers: [scope.registry],
    async collect() {
      const value = await options.load()
      this.reset()
      if (value !== undefined) fill(value, (labels, n) => this.set(labels, n))
    },
  })
}
