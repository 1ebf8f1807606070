import { describe, expect, test } from 'vitest'
import { createTimeline } from './timeline.ts'

describe('createTimeline', () => {
  test('behavior: reports fall at the chosen UTC time of consecutive days, activity between them', () => {
    const timeline = createTimeline('2026-04-30')
    expect(new Date(Number(timeline.reportTime(0)) * 1000).toISOString()).toBe('2026-04-30T12:00:00.000Z')
    expect(timeline.dateOf(1)).toBe('2026-05-01')
    const [first, second] = timeline.activityTimes(1)
    expect(first).toBeGreaterThan(timeline.reportTime(0))
    expect(second).toBeLessThan(timeline.reportTime(1))
    expect(timeline.genesisTimestamp).toBeLessThan(timeline.activityTimes(0)[0] as bigint)
  })

  test('behavior: epochs count 384 s from the mainnet beacon genesis', () => {
    const timeline = createTimeline('2026-04-01')
    // Electra (epoch 364032) activated on 2025-05-07T10:05:11Z
    expect(timeline.epochAt(1_746_612_311n)).toBe(364_032n)
  })

  test('behavior: rejects malformed dates and report times', () => {
    expect(() => createTimeline('2026-02-30')).toThrow(/invalid date/)
    expect(() => createTimeline('26-04-01')).toThrow(/invalid date/)
    expect(() => createTimeline('2026-04-01', 90_000)).toThrow(/reportSecondOfDay/)
  })
})
