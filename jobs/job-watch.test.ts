import { describe, expect, test } from 'vitest'
import { createJobWatch } from './job-watch.ts'
import type { JobInfo } from './runner.ts'
import { workerHealth } from './worker-health.ts'

const job = (id: string, name: string): JobInfo => ({ id, name, data: {}, attemptsMade: 0, attempts: 1 })

/** A processor that waits until the test releases it, handing the test the job it was given. */
function gate() {
  let release = () => {}
  let seen: JobInfo | undefined
  const processor = async (info: JobInfo) => {
    seen = info
    await new Promise<void>((resolve) => {
      release = resolve
    })
    return 'done'
  }
  return { processor, release: () => release(), job: () => seen }
}

describe('createJobWatch', () => {
  test('behavior: a job in flight past the bound without progress is stuck, and /health names it', async () => {
    let now = 1_000
    const watch = createJobWatch({ stuckAfterMs: 500, now: () => now })
    const sync = gate()
    const running = watch.wrap({ sync: sync.processor }).sync!(job('repeat:every-sync:1', 'sync'))
    expect(workerHealth(watch).http).toBe(200)
    now += 501
    expect(watch.inFlight()).toEqual([
      { id: 'repeat:every-sync:1', name: 'sync', startedAt: 1_000, runningMs: 501, idleMs: 501, stuck: true },
    ])
    const health = workerHealth(watch)
    expect(health.http).toBe(503)
    expect(health.body.message).toBe(
      'job sync (id repeat:every-sync:1) made no progress for 0.5 s (WORKER_STUCK_AFTER_MS 500)',
    )
    sync.release()
    expect(await running).toBe('done')
    expect(watch.inFlight()).toEqual([])
    expect(workerHealth(watch)).toEqual({ http: 200, body: { status: 'ok', jobs: [] } })
  })

  test('behavior: progress resets the bound; a long job that keeps progressing is never stuck', async () => {
    let now = 0
    const watch = createJobWatch({ stuckAfterMs: 500, now: () => now })
    const sync = gate()
    const running = watch.wrap({ sync: sync.processor }).sync!(job('s1', 'sync'))
    for (let i = 0; i < 10; i++) {
      now += 400
      sync.job()?.progress?.()
      expect(watch.inFlight()[0]).toMatchObject({ runningMs: (i + 1) * 400, idleMs: 0, stuck: false })
    }
    now += 501
    expect(watch.inFlight()[0]?.stuck).toBe(true)
    sync.release()
    await running
  })

  test('behavior: a failing job leaves the watch too, its error passed on', async () => {
    const watch = createJobWatch({ stuckAfterMs: 500 })
    const failing = watch.wrap({
      boom: async () => {
        throw new Error('rpc down')
      },
    })
    await expect(failing.boom!(job('b1', 'boom'))).rejects.toThrow('rpc down')
    expect(watch.inFlight()).toEqual([])
  })

  test('behavior: the longest without progress comes first; only the stuck ones are named', async () => {
    let now = 0
    const watch = createJobWatch({ stuckAfterMs: 500, now: () => now })
    const a = gate()
    const b = gate()
    const processors = watch.wrap({ a: a.processor, b: b.processor })
    const first = processors.a!(job('a1', 'a'))
    now += 400
    const second = processors.b!(job('b1', 'b'))
    now += 200
    expect(watch.inFlight().map((j) => [j.id, j.stuck])).toEqual([
      ['a1', true],
      ['b1', false],
    ])
    expect(workerHealth(watch).body.message).toBe(
      'job a (id a1) made no progress for 0.6 s (WORKER_STUCK_AFTER_MS 500)',
    )
    a.release()
    b.release()
    await Promise.all([first, second])
  })
})
