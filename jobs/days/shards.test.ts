import { describe, expect, test } from 'vitest'
import { JOB_SHARDS, jobSpan, MAX_SHARDS, shardRange, spanRange } from './shards.ts'

describe('jobSpan and spanRange', () => {
  test('behavior: a day is cut into jobs of at most JOB_SHARDS consecutive shards, all of the same size', () => {
    for (let shards = 1; shards <= MAX_SHARDS; shards *= 2) {
      const span = jobSpan(shards)
      const jobs = shards / span
      expect(Number.isInteger(jobs)).toBe(true)
      expect(span).toBeLessThanOrEqual(JOB_SHARDS)
      expect(span).toBe(Math.min(shards, JOB_SHARDS))
    }
    expect([1, 2, 4, 32, 256].map((shards) => jobSpan(shards))).toEqual([1, 2, 4, 16, 16])
    // PGlite: one shard a job
    expect(jobSpan(256, 1)).toBe(1)
  })

  test('behavior: the jobs of a day cover its address space once, in shard order', () => {
    for (const shards of [1, 2, 4, 256]) {
      const span = jobSpan(shards)
      const ranges = Array.from({ length: shards / span }, (_, job) => spanRange(job * span, span, shards))
      expect(ranges[0]?.lo).toBe(shardRange(0, shards).lo)
      expect(ranges.at(-1)?.hi).toBeNull()
      for (let i = 1; i < ranges.length; i++) expect(ranges[i]?.lo).toBe(ranges[i - 1]?.hi)
    }
  })

  test('behavior: a span past the last shard or of no shard is refused', () => {
    expect(() => spanRange(255, 2, 256)).toThrow('invalid span of 2 shards from shard 255 of 256')
    expect(() => spanRange(0, 0, 4)).toThrow('invalid span')
  })
})
