import { describe, expect, test } from 'vitest'
import { createDeliveryLanes, type LaneLimits, type LaneTask } from './lanes.ts'

/** Tasks that run until the test settles them, recording the order they started in. */
function harness(limits: Partial<LaneLimits> = {}) {
  let clock = 0
  const started: string[] = []
  const open = new Map<string, { resolve: () => void; reject: (err: Error) => void }>()
  const errors: string[] = []
  const lanes = createDeliveryLanes(
    { concurrency: 64, perOrg: 8, perWebhook: 4, staleMs: 5_000, ...limits },
    (err, task) => errors.push(`${task.key}: ${(err as Error).message}`),
    () => clock,
  )
  const task = (key: string, org: string, webhook = `${org}-hook`): LaneTask => ({
    key,
    org,
    webhook,
    run: () =>
      new Promise<void>((resolve, reject) => {
        started.push(key)
        open.set(key, { resolve, reject })
      }),
  })
  const settle = async (key: string, err?: Error) => {
    const o = open.get(key)
    if (!o) throw new Error(`${key} is not running`)
    open.delete(key)
    if (err) o.reject(err)
    else o.resolve()
    // let the lanes start what comes next
    await new Promise((r) => setTimeout(r, 0))
  }
  return { lanes, task, settle, started, errors, tick: (ms: number) => (clock += ms) }
}

describe('createDeliveryLanes', () => {
  test("behavior: a tenant whose receivers hang fills only its own lane; another tenant's delivery starts at once", () => {
    const h = harness({ concurrency: 16, perOrg: 4, perWebhook: 2 })
    for (let i = 0; i < 40; i++) h.lanes.offer(h.task(`dead-${i}`, 'noisy', `noisy-hook-${i % 10}`))
    expect(h.started).toHaveLength(4)
    expect(h.lanes.offer(h.task('healthy-1', 'quiet'))).toBe(true)
    expect(h.started.at(-1)).toBe('healthy-1')
    expect(h.lanes.size()).toEqual({ queued: 36, running: 5 })
  })

  test('behavior: with every slot taken, the next free slot goes to the organization not served last (round-robin)', async () => {
    const h = harness({ concurrency: 2, perOrg: 2, perWebhook: 2 })
    for (let i = 0; i < 6; i++) h.lanes.offer(h.task(`a-${i}`, 'a', `a-hook-${i}`))
    h.lanes.offer(h.task('b-0', 'b'))
    expect(h.started).toEqual(['a-0', 'a-1'])
    await h.settle('a-0')
    expect(h.started).toEqual(['a-0', 'a-1', 'b-0'])
    await h.settle('a-1')
    expect(h.started.at(-1)).toBe('a-2')
  })

  test('behavior: one subscription runs at most perWebhook at once; the others of its organization take turns', async () => {
    const h = harness({ concurrency: 10, perOrg: 3, perWebhook: 1 })
    for (let i = 0; i < 3; i++) h.lanes.offer(h.task(`x-${i}`, 'o', 'x'))
    h.lanes.offer(h.task('y-0', 'o', 'y'))
    expect(h.started).toEqual(['x-0', 'y-0'])
    await h.settle('x-0')
    expect(h.started).toEqual(['x-0', 'y-0', 'x-1'])
  })

  test('behavior: a key queued or running is not taken twice; a failure is reported and the lanes go on', async () => {
    const h = harness({ concurrency: 1, perOrg: 1, perWebhook: 1 })
    expect(h.lanes.offer(h.task('k', 'o'))).toBe(true)
    expect(h.lanes.offer(h.task('k', 'o'))).toBe(false)
    expect(h.lanes.offer(h.task('k2', 'o'))).toBe(true)
    expect(h.lanes.offer(h.task('k2', 'o'))).toBe(false)
    await h.settle('k', new Error('receiver gone'))
    expect(h.errors).toEqual(['k: receiver gone'])
    expect(h.started).toEqual(['k', 'k2'])
    const drained = h.lanes.drain()
    await h.settle('k2')
    await drained
    expect(h.lanes.size()).toEqual({ queued: 0, running: 0 })
  })

  test('behavior: a queued task not offered again within staleMs is dropped; one offered again is kept', async () => {
    const h = harness({ concurrency: 1, perOrg: 1, perWebhook: 1, staleMs: 1_000 })
    h.lanes.offer(h.task('busy', 'o'))
    h.lanes.offer(h.task('kept', 'o'))
    h.lanes.offer(h.task('dropped', 'o'))
    h.tick(600)
    h.lanes.offer(h.task('kept', 'o'))
    h.tick(600)
    await h.settle('busy')
    expect(h.started).toEqual(['busy', 'kept'])
    await h.settle('kept')
    expect(h.started).toEqual(['busy', 'kept'])
    expect(h.lanes.size()).toEqual({ queued: 0, running: 0 })
  })
})
