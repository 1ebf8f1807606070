import { allowlistCollector } from './allowlist.ts'
import type { SharedCollector } from './collector.ts'
import { dayCollector } from './days.ts'
import { followerCollector } from './follower.ts'
import { queueCollector } from './queue.ts'
import { webhookDeliveriesCollector } from './webhooks.ts'

/** The shared-state collectors every registry has. */
export const SHARED_COLLECTORS: readonly SharedCollector[] = [
  followerCollector,
  dayCollector,
  queueCollector,
  webhookDeliveriesCollector,
  allowlistCollector,
]
