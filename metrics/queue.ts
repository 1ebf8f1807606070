import { QUEUE_STATES } from '../common/queue.ts'
import { type SharedCollector, sourceGauge } from './collector.ts'

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
