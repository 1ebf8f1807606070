import { createHash } from 'node:crypto'
import { Writable } from 'node:stream'

/** Bytes a chunk holds before it is stored (the last one may be shorter). */
export const EXPORT_CHUNK_BYTES = 1024 * 1024

/** A Writable that stores what it is given as ordered chunks, and what it stored. */
export interface ChunkSink extends Writable {
  /** Chunks stored, bytes stored and their SHA-256 (hex): final once the stream has finished. */
  stored(): { chunks: number; bytes: number; sha256: string }
}

/**
 * A Writable that gathers writes up to `chunkBytes` and hands each full chunk to `store` (seq from 0), calling
 * back only once it is stored: a builder that respects `write()`'s answer holds at most one chunk plus the
 * stream's high-water mark in memory. The remainder is stored when the stream ends.
 *
 * @example
 * const sink = chunkSink((seq, data) => repos.exports.appendChunk(id, seq, data))
 * await buildExport(repos, spec, sink)
 */
export function chunkSink(
  store: (seq: number, data: Buffer) => Promise<void>,
  chunkBytes = EXPORT_CHUNK_BYTES,
): ChunkSink {
  let parts: Buffer[] = []
  let buffered = 0
  let seq = 0
  let bytes = 0
  const hash = createHash('sha256')
  let digest: string | undefined
  const flush = async () => {
    if (buffered === 0) return
    const data = Buffer.concat(parts, buffered)
    parts = []
    buffered = 0
    await store(seq, data)
    seq += 1
  }
  const sink = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer | string, encoding, callback) {
      const data = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk
      hash.update(data)
      bytes += data.length
      parts.push(data)
      buffered += data.length
      if (buffered < chunkBytes) return callback()
      flush().then(() => callback(), callback)
    },
    final(callback) {
      flush().then(() => {
        digest = hash.digest('hex')
        callback()
      }, callback)
    },
  }) as ChunkSink
  sink.stored = () => ({ chunks: seq, bytes, sha256: digest ?? '' })
  return sink
}
