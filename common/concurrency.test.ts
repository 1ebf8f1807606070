import { describe, expect, test } from 'vitest'
import { forEachConcurrently } from './concurrency.ts'

const tick = () => new Promise((resolve) => setTimeout(resolve, 1))

describe('forEachConcurrently', () => {
  test('behavior: every item runs once, never more than the limit at once', async () => {
    const seen: number[] = []
    let running = 0
    let most = 0
    await forEachConcurrently([...Array(20).keys()], 3, async (item) => {
      running += 1
      most = Math.max(most, running)
      await tick()
      seen.push(item)
      running -= 1
    })
    expect(seen.sort((a, b) => a - b)).toEqual([...Array(20).keys()])
    expect(most).toBe(3)
  })

  test('edge: after a failure no further item starts; the first failure is thrown after the started ones settle', async () => {
    const started: number[] = []
    let settled = 0
    const run = forEachConcurrently([...Array(10).keys()], 2, async (item) => {
      started.push(item)
      await tick()
      settled += 1
      if (item === 2) throw new Error('item 2 failed')
      if (item === 3) throw new Error('item 3 failed')
    })
    await expect(run).rejects.toThrow('item 2 failed')
    expect(started).toEqual([0, 1, 2, 3])
    expect(settled).toBe(started.length)
  })

  test('edge: no items is no work', async () => {
    await forEachConcurrently([], 8, async () => {
      throw new Error('never')
    })
  })
})
