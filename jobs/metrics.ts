import { collectDefaultMetrics, Gauge, Histogram, type LabelValues, Registry } from 'prom-client'
import type { Db } from '../db/index.ts'
import { QUEUE_NAME, QUEUE_STATES, type QueueCounts } from './queue.ts'
import type { Processor } from './runner.ts'

/**
 * The service's Prometheus metrics (served on the API's `/metrics`). Two kinds:
 *
 * - Cluster-wide figures of the shared state, computed at scrape time from Postgres (follower lag, days,
 *   webhook deliveries), Redis (BullMQ queue depth and failures) and the chain's RPC head: any API process
 *   answers the same, however many workers run elsewhere. Each source is read once per scrape, within
 *   `timeoutMs`; a source that fails or is slow leaves its series out and sets
 *   `lsreport_metrics_source_up{source}` to 0, so a slow database never hangs a scrape.
 * - Per-process histograms: API latency (`api/metrics.ts`) and the durations of the jobs run in this process
 *   (`instrumentProcessors`, in the embedded `lsreport up`), plus Node's process metrics.
 */

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
}

/**
 * One group of gauges computed at scrape time from the shared state. Adding a figure of the shared state is
 * one such function added to `SHARED_COLLECTORS` (`webhookDeliveriesCollector` is a short example).
 */
export type SharedCollector = (scope: CollectorScope) => void

/** The labelled values a gauge shows after a scrape, from its source's value. */
type Fill<T, L extends string> = (value: T, set: (labels: LabelValues<L>, n: number) => void) => void

/**
 * A gauge whose series are recomputed at every scrape from `load` (a `scope.source`); none when the source
 * failed.
 */
export function sourceGauge<T, L extends string>(
  scope: CollectorScope,
  options: { name: string; help: string; labelNames: readonly L[]; load: () => Promise<T | undefined> },
  fill: Fill<T, L>,
): Gauge<L> {
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

interface FollowerRow {
  chain_id: number
  head: string
  synced: string | null
  age_seconds: string | number
}

/** The chain's head from its RPC: one batched request (`eth_chainId`, `eth_blockNumber`). */
async function rpcHead(rpcUrl: string, signal: AbortSignal): Promise<{ chainId: number; head: bigint }> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] },
    ]),
    signal,
  })
  if (!res.ok) throw new Error(`RPC answered ${res.status}`)
  const body = (await res.json()) as { id: number; result?: string }[]
  const result = (id: number) => {
    const r = body.find((x) => x.id === id)?.result
    if (typeof r !== 'string') throw new Error(`RPC gave no result for request ${id}`)
    return BigInt(r)
  }
  return { chainId: Number(result(1)), head: result(2) }
}

/**
 * Follower lag per chain: head (the RPC's when this process has RPC_URL, else the head the follower last
 * recorded in `chain_heads`) minus confirmations minus the lowest cursor of `chain_cursors`.
 */
export const followerCollector: SharedCollector = (scope) => {
  const rows = scope.source('follower', async () => {
    const result = await scope.db.raw<{ rows: FollowerRow[] }>(
      `select h.chain_id, h.block_number as head,
              (select min(c.block_number) from chain_cursors c where c.chain_id = h.chain_id) as synced,
              extract(epoch from now() - h.updated_at) as age_seconds
         from chain_heads h`,
    )
    return result.rows
  })
  const rpc = scope.source('rpc', async () => {
    const url = scope.rpcUrl()
    if (!url) return undefined
    return rpcHead(url, AbortSignal.timeout(1_000))
  })
  const perChain = async () => {
    const [list, chain] = await Promise.all([rows(), rpc()])
    return list?.map((r) => {
      const recorded = BigInt(r.head)
      const head = chain && chain.chainId === r.chain_id && chain.head > recorded ? chain.head : recorded
      const target = head - BigInt(scope.confirmations)
      const synced = r.synced === null ? undefined : BigInt(r.synced)
      return { chain_id: String(r.chain_id), head, synced, target, age: Number(r.age_seconds) }
    })
  }
  const chainLabel = ['chain_id'] as const
  sourceGauge(
    scope,
    {
      name: 'lsreport_follower_lag_blocks',
      help: 'Final blocks (head - CONFIRMATIONS) the follower has not ingested yet',
      labelNames: chainLabel,
      load: perChain,
    },
    (list, set) => {
      for (const c of list) {
        if (c.synced === undefined) continue
        set({ chain_id: c.chain_id }, Number(c.target > c.synced ? c.target - c.synced : 0n))
      }
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_chain_head_block',
      help: 'Head block of the chain (RPC when this process has RPC_URL, else the follower last saw)',
      labelNames: chainLabel,
      load: perChain,
    },
    (list, set) => {
      for (const c of list) set({ chain_id: c.chain_id }, Number(c.head))
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_follower_synced_block',
      help: 'Block up to which every contract stream of the follower is ingested',
      labelNames: chainLabel,
      load: perChain,
    },
    (list, set) => {
      for (const c of list) if (c.synced !== undefined) set({ chain_id: c.chain_id }, Number(c.synced))
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_follower_last_seen_seconds',
      help: 'Seconds since the follower last recorded the chain head (a stopped follower grows it)',
      labelNames: chainLabel,
      load: perChain,
    },
    (list, set) => {
      for (const c of list) set({ chain_id: c.chain_id }, c.age)
    },
  )
}

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

/** Queue depth and failures: BullMQ's counts on Redis, or the inline runner's. */
export const queueCollector: SharedCollector = (scope) => {
  const load = scope.source('queue', async () => scope.queue()?.counts())
  sourceGauge(
    scope,
    {
      name: 'lsreport_queue_jobs',
      help: `Jobs of the queue by state (${QUEUE_STATES.join(', ')}; failed: the failures kept, up to 1000)`,
      labelNames: ['state'],
      load,
    },
    (counts, set) => {
      for (const state of QUEUE_STATES) set({ state }, counts[state] ?? 0)
    },
  )
}

interface DeliveryRow {
  status: string
  n: string | number
  oldest_seconds: string | number | null
}

/** Webhook deliveries by outcome (`webhook_deliveries.status`) and the age of the oldest pending one. */
export const webhookDeliveriesCollector: SharedCollector = (scope) => {
  const load = scope.source('webhooks', async () => {
    const result = await scope.db.raw<{ rows: DeliveryRow[] }>(
      `select status, count(*) as n,
              extract(epoch from now() - min(created_at)) as oldest_seconds
         from webhook_deliveries group by status`,
    )
    return result.rows
  })
  sourceGauge(
    scope,
    {
      name: 'lsreport_webhook_deliveries',
      help: 'Webhook deliveries (one per event and subscription) by status: pending, succeeded, failed',
      labelNames: ['status'],
      load,
    },
    (rows, set) => {
      for (const status of ['pending', 'succeeded', 'failed']) set({ status }, 0)
      for (const r of rows) set({ status: r.status }, Number(r.n))
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_webhook_oldest_pending_seconds',
      help: 'Age of the oldest pending webhook delivery (0 when none is pending)',
      labelNames: [],
      load,
    },
    (rows, set) => {
      const oldest = rows.find((r) => r.status === 'pending')?.oldest_seconds
      set({}, oldest === null || oldest === undefined ? 0 : Number(oldest))
    },
  )
}

/** The shared-state collectors every registry has. */
export const SHARED_COLLECTORS: readonly SharedCollector[] = [
  followerCollector,
  dayCollector,
  queueCollector,
  webhookDeliveriesCollector,
]

/** A BullMQ queue's counts on Redis, from a process that runs no worker (the API); BullMQ loaded lazily. */
export function bullQueueCounts(options: { redisUrl: string; prefix: string }): QueueCountsSource & {
  close(): Promise<void>
} {
  let opened: Promise<{ queue: import('bullmq').Queue; connection: import('ioredis').Redis }> | undefined
  const open = async () => {
    const [{ Queue }, { Redis }] = await Promise.all([import('bullmq'), import('ioredis')])
    const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2_000 })
    return { queue: new Queue(QUEUE_NAME, { connection, prefix: options.prefix }), connection }
  }
  return {
    async counts() {
      opened ??= open()
      const { queue } = await opened
      return (await queue.getJobCounts(...QUEUE_STATES)) as QueueCounts
    },
    async close() {
      if (!opened) return
      const { queue, connection } = await opened
      await queue.close()
      connection.disconnect()
    },
  }
}

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

let processRegistry: Registry | undefined

/**
 * Node's process metrics (`lsreport_process_*`, `lsreport_nodejs_*`: CPU, memory, event loop, GC): made once
 * per process (they install observers that live as long as it), shared by every `ServiceMetrics` registry.
 */
function nodeProcessRegistry(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry, prefix: 'lsreport_' })
  }
  return processRegistry
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
}): ServiceMetrics {
  const registry = Registry.merge([nodeProcessRegistry()])
  const timeoutMs = options.timeoutMs ?? SCRAPE_TIMEOUT_MS
  const bull = options.redisUrl
    ? bullQueueCounts({ redisUrl: options.redisUrl, prefix: options.queuePrefix ?? QUEUE_NAME })
    : undefined
  let queue: QueueCountsSource | undefined = bull
  let rpcUrl = options.rpcUrl
  /** Per source: whether its last read answered (1), failed or timed out (0), or had nothing to say. */
  const sourceUp = new Map<string, () => Promise<number | undefined>>()

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
    sourceUp.set(name, () =>
      start().raw.then(
        (v) => (v === undefined ? undefined : 1),
        () => 0,
      ),
    )
    return () => start().value
  }
  const scope: CollectorScope = {
    registry,
    db: options.db,
    confirmations: options.confirmations,
    rpcUrl: () => rpcUrl,
    queue: () => queue,
    source,
  }
  for (const collector of [...SHARED_COLLECTORS, ...(options.extra ?? [])]) collector(scope)

  new Gauge({
    name: 'lsreport_metrics_source_up',
    help: 'Whether a shared source answered this scrape in time (1) or failed or timed out (0)',
    labelNames: ['source'],
    registers: [registry],
    async collect() {
      const states = await Promise.all([...sourceUp].map(async ([name, up]) => [name, await up()] as const))
      this.reset()
      for (const [name, up] of states) if (up !== undefined) this.set({ source: name }, up)
    },
  })
  const jobDuration = new Histogram({
    name: 'lsreport_job_duration_seconds',
    help: 'Duration of the jobs run in this process, by job name and outcome (succeeded, failed)',
    labelNames: ['job', 'outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180, 600],
    registers: [registry],
  })

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

/**
 * Wraps processors so each run is observed in `lsreport_job_duration_seconds` (the jobs run in this process).
 *
 * @example
 * const runner = createInlineRunner(instrumentProcessors(jobs.processors, metrics), logger)
 */
export function instrumentProcessors(
  processors: Record<string, Processor>,
  metrics: Pick<ServiceMetrics, 'jobDuration'>,
): Record<string, Processor> {
  return Object.fromEntries(
    Object.entries(processors).map(([name, processor]) => [
      name,
      async (job) => {
        const end = metrics.jobDuration.startTimer({ job: name })
        try {
          const result = await processor(job)
          end({ outcome: 'succeeded' })
          return result
        } catch (err) {
          end({ outcome: 'failed' })
          throw err
        }
      },
    ]),
  )
}
