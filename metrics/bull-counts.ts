import { QUEUE_NAME, QUEUE_STATES, type QueueCounts } from '../common/queue.ts'
import type { QueueCountsSource } from './collector.ts'

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
