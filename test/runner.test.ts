import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, test } from 'vitest'
import { createLogger } from '../common/logger.ts'
import {
  createBullRunner,
  createInlineRunner,
  type JobRunner,
  type Processor,
  UnrecoverableError,
} from '../jobs/runner.ts'
import { REDIS_URL, redisAvailable } from './helpers/services.ts'

const redisOk = await redisAvailable()
const logger = createLogger({ level: 'silent' })
let runner: JobRunner | undefined
afterEach(async () => {
  await runner?.close()
  runner = undefined
})

function make(kind: 'inline' | 'bullmq', processors: Record<string, Processor>): JobRunner {
  runner =
    kind === 'inline'
      ? createInlineRunner(processors, logger)
      : createBullRunner(processors, {
          redisUrl: REDIS_URL,
          prefix: `t${randomBytes(4).toString('hex')}`,
          logger,
        })
  return runner
}

const waitFor = async (check: () => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe.each(['inline', 'bullmq'] as const)('job runner (%s)', (kind) => {
  const run = kind === 'inline' || redisOk

  test.runIf(run)('behavior: runs a job with its data; a queued job id is not added twice', async () => {
    const seen: unknown[] = []
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => {
      release = r
    })
    const r = make(kind, {
      work: async (job) => {
        await gate
        seen.push(job.data)
      },
    })
    await r.enqueue('work', { n: 1 }, { jobId: 'day-1-2026-05-01' })
    await r.enqueue('work', { n: 2 }, { jobId: 'day-1-2026-05-01' })
    await r.start()
    release()
    await waitFor(() => seen.length >= 1)
    await r.idle()
    expect(seen).toEqual([{ n: 1 }])
  })

  test.runIf(run)('behavior: a failing job is retried with backoff until it succeeds', async () => {
    let calls = 0
    const attempts: number[] = []
    const r = make(kind, {
      flaky: async (job) => {
        attempts.push(job.attemptsMade)
        calls++
        if (calls < 3) throw new Error('transient')
      },
    })
    await r.start()
    await r.enqueue('flaky', {}, { attempts: 5 })
    await waitFor(() => calls === 3)
    await r.idle()
    expect(attempts).toEqual([0, 1, 2])
    expect(await r.failed()).toEqual([])
  })

  test.runIf(run)(
    'behavior: an unrecoverable error goes to the failed set at once, with its message',
    async () => {
      let calls = 0
      const r = make(kind, {
        broken: async () => {
          calls++
          throw new UnrecoverableError('bad payload')
        },
      })
      await r.start()
      await r.enqueue('broken', {}, { jobId: 'broken-1', attempts: 5 })
      await waitFor(() => calls === 1)
      let failed: Awaited<ReturnType<JobRunner['failed']>> = []
      for (let i = 0; i < 100 && failed.length === 0; i++) {
        failed = await r.failed()
        await new Promise((res) => setTimeout(res, 20))
      }
      expect(failed).toEqual([{ id: 'broken-1', name: 'broken', error: 'bad payload', attemptsMade: 1 }])
      expect(calls).toBe(1)
    },
  )

  test.runIf(run)(
    'behavior: the id of a job that failed for good can be queued again, and runs',
    async () => {
      const seen: unknown[] = []
      const r = make(kind, {
        once: async (job) => {
          seen.push(job.data)
          if (seen.length === 1) throw new UnrecoverableError('first try fails')
        },
      })
      await r.start()
      await r.enqueue('once', { n: 1 }, { jobId: 'retry-me' })
      await waitFor(() => seen.length === 1)
      for (let i = 0; i < 100 && (await r.failed()).length === 0; i++)
        await new Promise((res) => setTimeout(res, 20))
      expect((await r.failed()).map((f) => f.id)).toEqual(['retry-me'])
      await r.enqueue('once', { n: 2 }, { jobId: 'retry-me' })
      await waitFor(() => seen.length === 2)
      expect(seen).toEqual([{ n: 1 }, { n: 2 }])
    },
  )

  test.runIf(run)('behavior: every() runs a job periodically', async () => {
    let ticks = 0
    const r = make(kind, {
      tick: async () => {
        ticks++
      },
    })
    await r.start()
    await r.every('tick', 100)
    await waitFor(() => ticks >= 3)
    expect(ticks).toBeGreaterThanOrEqual(3)
  })

  test.runIf(run)('behavior: close() waits for the job in flight', async () => {
    let finished = false
    let started = false
    const r = make(kind, {
      slow: async () => {
        started = true
        await new Promise((res) => setTimeout(res, 300))
        finished = true
      },
    })
    await r.start()
    await r.enqueue('slow', {})
    await waitFor(() => started)
    await r.close()
    runner = undefined
    expect(finished).toBe(true)
  })

  test.runIf(run)("behavior: job ids with ':' are refused", async () => {
    const r = make(kind, { x: async () => {} })
    await expect(r.enqueue('x', {}, { jobId: 'day:1' })).rejects.toThrow(/must not contain/)
  })
})

describe('the inline runner, concurrency per job name', () => {
  test('behavior: runs up to concurrency[name] jobs of a name at once, one of any other name', async () => {
    const running: Record<string, number> = { wide: 0, narrow: 0 }
    const peak: Record<string, number> = { wide: 0, narrow: 0 }
    const work =
      (name: 'wide' | 'narrow'): Processor =>
      async () => {
        running[name] = (running[name] ?? 0) + 1
        peak[name] = Math.max(peak[name] ?? 0, running[name] ?? 0)
        await new Promise((res) => setTimeout(res, 40))
        running[name] = (running[name] ?? 0) - 1
      }
    const r = createInlineRunner({ wide: work('wide'), narrow: work('narrow') }, logger, { wide: 2 })
    runner = r
    for (let i = 0; i < 6; i++) {
      await r.enqueue('wide', {})
      await r.enqueue('narrow', {})
    }
    await r.start()
    await r.idle()
    expect(peak).toEqual({ wide: 2, narrow: 1 })
  })
})
