import { type Histogram, Registry } from 'prom-client'
import { QUEUE_NAME } from '../common/queue.ts'
import type { Db } from '../db/index.ts'
import { bullQueueCounts } from './bull-counts.ts'
import type { CollectorScope, QueueCountsSource, SharedCollector } from './collector.ts'
import { SHARED_COLLECTORS } from './collectors.ts'
import { jobDurationHistogram } from './instrument.ts'
import { nodeProcessRegistry } from './process.ts'
import { createScrapeSources, registerSourceUp } from './scrape-sources.ts'

/** A process's metrics: its registry, the job histogram, and where the queue's counts come from. */
export interface ServiceMetrics {
  registry: Registry
  /** Durations of the jobs run in this process, by job name and outcome. */
  jobDuration: Histogram<'job' | 'outcome'>
  /** Reads the queue's counts from `source` (the inline runner of an embedded start). */
  useQueue(source: QueueCountsSource | undefined): void
  /** Reads the chain's head from this RPC (the embedded devnet's, known once it started). */
  useRpc(rpcUrl: string): void
  /** The Prometheus text of every metric. */
  scrape(): Promise<string>
  close(): Promise<void>
}

/** How long a scrape waits for each shared source (ms). */
export const SCRAPE_TIMEOUT_MS = 2_000

/**
 * Builds the metrics of one process: the shared-state collectors (`SHARED_COLLECTORS` plus `extra`), the
 * per-process job histogram and Node's process metrics. With `redisUrl` the queue's counts come from
 * BullMQ on Redis; without, from the runner given to `useQueue`.
 *
 * @example
 * const metrics = createServiceMetrics({ db, confirmations: 12, rpcUrl, redisUrl, queuePrefix: 'lsreport' })
 * const text = await metrics.scrape() // "# HELP lsreport_follower_lag_blocks ..."
 */
export function createServiceMetrics(options: {
  db: Db
  confirmations: number
  rpcUrl?: string | undefined
  redisUrl?: string | undefined
  queuePrefix?: string | undefined
  timeoutMs?: number
  extra?: readonly SharedCollector[]
  /** Per-tenant series too (METRICS_TENANT_LABELS=1); default false: no label names an org or a client. */
  tenantLabels?: boolean
}): ServiceMetrics {
  const registry = Registry.merge([nodeProcessRegistry()])
  const timeoutMs = options.timeoutMs ?? SCRAPE_TIMEOUT_MS
  const bull = options.redisUrl
    ? bullQueueCounts({ redisUrl: options.redisUrl, prefix: options.queuePrefix ?? QUEUE_NAME })
    : undefined
  let queue: QueueCountsSource | undefined = bull
  let rpcUrl = options.rpcUrl
  const { source, up } = createScrapeSources(timeoutMs)
  const scope: CollectorScope = {
    registry,
    db: options.db,
    confirmations: options.confirmations,
    rpcUrl: () => rpcUrl,
    queue: () => queue,
    source,
    tenantLabels: options.tenantLabels ?? false,
  }
  for (const collector of [...SHARED_COLLECTORS, ...(options.extra ?? [])]) collector(scope)

  registerSourceUp(registry, up)
  const jobDuration = jobDurationHistogram(registry)

  return {
    registry,
    jobDuration,
    useQueue(source) {
      queue = source ?? bull
    },
    useRpc(url) {
      rpcUrl = url
    },
    scrape: () => registry.metrics(),
    async close() {
      await bull?.close()
    },
  }
}
