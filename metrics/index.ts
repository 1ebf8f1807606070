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
 * - A worker's own registry (`worker.ts`, served on WORKER_PORT by jobs/worker-health.ts): its job durations,
 *   its jobs in flight and stuck ones, Node's process metrics; no shared figure (the API serves those).
 *
 * Layout: `collector.ts` (what a collector reads, `sourceGauge`), one file per shared source (`follower.ts`,
 * `days.ts`, `queue.ts`, `webhooks.ts`) listed in `collectors.ts`, `scrape-sources.ts` (one read per scrape
 * within the timeout, `lsreport_metrics_source_up`), `service.ts` (the registry of a process),
 * `instrument.ts` (job durations), `worker.ts` (a worker's registry), `token.ts` (the METRICS_TOKEN check).
 *
 * Where it sits: a layer of its own over db/ and common/ (test/architecture.test.ts), so that api/ (which
 * serves `/metrics`), jobs/ and cli/ all import it while it imports none of them. It reads the shared state
 * through the `Db` handle, the RPC head with a plain JSON-RPC `fetch` (no viem), and BullMQ's counts on Redis
 * (`bull-counts.ts`, BullMQ loaded lazily and only with REDIS_URL; it never runs a worker). The queue's name
 * and states are common/queue.ts.
 */

export { bullQueueCounts } from './bull-counts.ts'
export {
  type CollectorScope,
  type QueueCountsSource,
  type SharedCollector,
  sourceGauge,
} from './collector.ts'
export { SHARED_COLLECTORS } from './collectors.ts'
export { dayCollector } from './days.ts'
export { followerCollector } from './follower.ts'
export { instrumentProcessors, jobDurationHistogram } from './instrument.ts'
export { queueCollector } from './queue.ts'
export { createServiceMetrics, SCRAPE_TIMEOUT_MS, type ServiceMetrics } from './service.ts'
export { createGuessBudget, type GuessBudget, metricsTokenCheck } from './token.ts'
export { webhookDeliveriesCollector } from './webhooks.ts'
export { createWorkerMetrics, type WorkerJobsState, type WorkerMetrics } from './worker.ts'
