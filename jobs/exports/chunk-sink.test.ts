import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { describe, expect, test } from 'vitest'
import { chunkSink } from './chunk-sink.ts'

describe('chunkSink', () => {
  test('behavior: stores full chunks in order, then the remainder at the end, with the bytes and sha256 of all', async () => {
    const stored: [number, Buffer][] = []
    const sink = chunkSink(async (seq, data) => {
      await new Promise((r) => setTimeout(r, 1))
      stored.push([seq, data])
    }, 10)
    const parts = ['abcdef', 'ghijklm', 'nop', 'qrstuvwxyz01', '2']
    await pipeline(Readable.from(parts.map((p) => Buffer.from(p))), sink)
    const all = Buffer.from(parts.join(''))
    expect(stored.map(([seq]) => seq)).toEqual(stored.map((_, i) => i))
    expect(Buffer.concat(stored.map(([, d]) => d)).toString()).toBe(all.toString())
    // every stored chunk but the last holds at least the chunk size
    for (const [, d] of stored.slice(0, -1)) expect(d.length).toBeGreaterThanOrEqual(10)
    expect(sink.stored()).toEqual({
      chunks: stored.length,
      bytes: all.length,
      sha256: createHash('sha256').update(all).digest('hex'),
    })
  })

  test('behavior: a write waits for its chunk to be stored (backpressure), and a failed store fails the stream', async () => {
    let storing = 0
    let most = 0
    const sink = chunkSink(async () => {
      storing += 1
      most = Math.max(most, storing)
      await new Promise((r) => setTimeout(r, 2))
      storing -= 1
    }, 4)
    await pipeline(Readable.from(Array.from({ length: 20 }, () => Buffer.from('12345'))), sink)
    expect(most).toBe(1)
    const failing = chunkSink(async () => {
      throw new Error('database gone')
    }, 4)
    await expect(pipeline(Readable.from([Buffer.from('123456')]), failing)).rejects.toThrow('database gone')
  })
})
