import { createHash } from 'node:crypto'
import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../../fixtures/property-runs.ts'
import {
  CONTENT_BUCKET_BITS,
  contentBucket,
  contentHashOfLines,
  createContentTree,
  dayContentHash,
} from './content-hash.ts'
import { MAX_SHARDS, shardRange } from './shards.ts'

const hex40 = (n: bigint) => `0x${n.toString(16).padStart(40, '0')}`
/** A canonical line as the pipeline hashes it: chain id, report epoch, address, then the rest. */
const lineOf = (address: string, rest: string) => `1\t400225\t${address}\t${rest}\n`

/** The definition, written out plainly: 4,096 leaves (sha-256 of each bucket's lines), folded pairwise. */
function referenceHash(lines: string[]): string {
  const buckets: string[] = Array.from({ length: 1 << CONTENT_BUCKET_BITS }, () => '')
  for (const line of lines) {
    const address = line.split('\t')[2] as string
    buckets[Number.parseInt(address.slice(2, 5), 16)] += line
  }
  let level: Buffer[] = buckets.map((text) => createHash('sha256').update(text).digest())
  while (level.length > 1) {
    const up: Buffer[] = []
    for (let i = 0; i < level.length; i += 2) {
      up.push(
        createHash('sha256')
          .update(Buffer.concat([level[i] as Buffer, level[i + 1] as Buffer]))
          .digest(),
      )
    }
    level = up
  }
  return (level[0] as Buffer).toString('hex')
}

/** The day's hash as the pipeline makes it with `shards` shards: a tree per shard, then their roots. */
function shardedHash(lines: string[], shards: number): string {
  const addresses = lines.map((line) => line.split('\t')[2] as string)
  let i = 0
  const roots = Array.from({ length: shards }, (_, shard) => {
    const { hi } = shardRange(shard, shards)
    const tree = createContentTree(shard, shards)
    for (; i < lines.length && (hi === null || (addresses[i] as string) < hi); i++) {
      const address = addresses[i] as string
      if (tree.changes(address)) tree.enter(address)
      tree.update(lines[i] as string)
    }
    return { shard, content_hash: tree.root() }
  })
  return dayContentHash(roots)
}

const arbLines = fc
  .uniqueArray(fc.bigInt({ min: 0n, max: 2n ** 160n - 1n }), { minLength: 0, maxLength: 40 })
  .chain((ids) =>
    fc.tuple(
      fc.constant(ids.map(hex40).sort()),
      fc.array(fc.stringMatching(/^[0-9.]{1,12}$/), { minLength: ids.length, maxLength: ids.length }),
    ),
  )
  .map(([addresses, rests]) => addresses.map((a, i) => lineOf(a, `${rests[i]}\t\\N\tf`)))

describe('the content hash of a day', () => {
  test.prop([arbLines], { numRuns: runs(12) })(
    'property: one hash for any shard count (1 to 4,096), equal to the definition and to the stored lines read back in any pieces',
    async (lines) => {
      const expected = referenceHash(lines)
      for (const shards of [1, 2, 32, MAX_SHARDS]) {
        expect(shardedHash(lines, shards), `${shards} shards`).toBe(expected)
      }
      // read back as COPY text in pieces of whole lines of any size
      const pieces: string[] = []
      for (let i = 0; i < lines.length; i += 3) pieces.push(lines.slice(i, i + 3).join(''))
      expect(await contentHashOfLines(pieces)).toBe(expected)
    },
  )

  test('behavior: any change of a record, a record more or a record less changes it', async () => {
    const lines = ['0x00', '0x7f', '0x80', '0xff'].map((p) => lineOf(`${p}${'1'.repeat(38)}`, '5\tf'))
    const base = referenceHash(lines)
    expect(await contentHashOfLines([lines.join('')])).toBe(base)
    const changed = [...lines.slice(0, 3), lineOf(`0xff${'1'.repeat(38)}`, '6\tf')]
    expect(referenceHash(changed)).not.toBe(base)
    expect(shardedHash(changed, 2)).toBe(referenceHash(changed))
    expect(shardedHash(lines.slice(1), 32)).not.toBe(base)
    expect(shardedHash([...lines, lineOf(`0xff${'2'.repeat(38)}`, '0\tf')], 4)).not.toBe(base)
    // a day of no record: the root of empty buckets
    expect(shardedHash([], 8)).toBe(referenceHash([]))
  })

  test('behavior: lines out of address order, outside the shard, or before their bucket are refused', () => {
    expect(contentBucket(`0xabc${'0'.repeat(37)}`)).toBe(0xabc)
    const tree = createContentTree(1, 2)
    expect(() => tree.enter(`0x7ff${'0'.repeat(37)}`)).toThrow(/outside shard 1 of 2/)
    expect(() => tree.update('x')).toThrow(/before their bucket/)
    tree.enter(`0x900${'0'.repeat(37)}`)
    expect(() => tree.enter(`0x800${'0'.repeat(37)}`)).toThrow(/out of order/)
    expect(() =>
      dayContentHash([{ content_hash: '00' }, { content_hash: '00' }, { content_hash: '00' }]),
    ).toThrow(/3 shards/)
  })
})
