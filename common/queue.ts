/**
 * The job queue's name and states, without BullMQ: shared by the runner (jobs/runner.ts) and the metrics
 * (metrics/), which read the queue's counts without loading the runner.
 */

/** The BullMQ queue every job runs on (under the QUEUE_PREFIX). */
export const QUEUE_NAME = 'lsreport'

/** The states `JobRunner.counts()` reports (BullMQ's names). */
export const QUEUE_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'failed',
] as const

/** How many jobs are in each state now (`failed` counts the failures kept). */
export type QueueCounts = Record<(typeof QUEUE_STATES)[number], number>
