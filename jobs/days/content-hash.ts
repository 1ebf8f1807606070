import { createHash, type Hash } from 'node:crypto'
import { MAX_SHARDS } from './shards.ts'

/**
 * A day's content hash: a function of its wallet records alone, whatever the shard layout, runner or backend
 * that computed them (docs/decisions.md "A day's content hash").
 *
 * Each record is its canonical line: the COPY text line of its `wallet_records` row without the run's
 * `version` column (chain id, report epoch, address, ..., engine version, newline; what `wallet-lines.ts`
 * writes and what `COPY (select <those columns> ...) TO STDOUT` reads back). The address space is cut into
 * 4,096 fixed buckets by the first three hex digits of the address (12 bits, `CONTENT_BUCKET_BITS`). A bucket's
 * leaf is sha-256 of its records' lines in address order (an empty bucket: sha-256 of nothing), and the hash
 * is the root of the complete binary Merkle tree over the 4,096 leaves in bucket order (a node: sha-256 of its
 * two children's 32-byte digests), as 64 hex digits.
 *
 * Why a fixed tree: a shard is an aligned run of `4096 / shards` buckets (`shardRange`: a power of two of
 * shards, at most MAX_SHARDS = 4,096), so its records make exactly one subtree, whose root the shard stores;
 * the finalization folds the shards' roots up to the same root whatever their count (1, 2, ..., 4,096). The
 * lines are hashed as the pipeline produces them (a few hash calls per chunk of 100 lines, no call per line:
 * a per-record sha-256 summed mod 2^256 measured 2-3x the hashing time on one core, against the day
 * pipeline's 70 % of a bare COPY target), and a verifier needs only the records.
 */

/** The content hash scheme this code computes (`days.content_hash_scheme`; null: an older, layout-bound one). */
export const CONTENT_HASH_SCHEME = 2

/** Bits of the address that pick a record's bucket (the leaves of the tree). */
export const CONTENT_BUCKET_BITS = 12
const BUCKETS = 1 << CONTENT_BUCKET_BITS

if (MAX_SHARDS > BUCKETS || !Number.isInteger(Math.log2(MAX_SHARDS))) {
  throw new Error('a shard must be a whole subtree of the content hash (MAX_SHARDS <= 4096, a power of two)')
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest()
const node = (left: Buffer, right: Buffer) => sha256(Buffer.concat([left, right]))

/** The root of an empty subtree of each height (height 0: an empty bucket's leaf). */
const EMPTY: Buffer[] = [sha256('')]
for (let h = 1; h <= CONTENT_BUCKET_BITS; h++) {
  const below = EMPTY[h - 1] as Buffer
  EMPTY.push(node(below, below))
}

/**
 * The bucket of a lower-case address (`0x` + 40 hex digits): its first three hex digits.
 *
 * @example
 * contentBucket('0xfff0000000000000000000000000000000000000') // 4095
 */
export function contentBucket(address: string): number {
  return Number.parseInt(address.slice(2, 5), 16)
}

/**
 * The root of the subtree of height `height` whose first leaf is `first`, from its non-empty leaves: folded a
 * level at a time, a pair of empty subtrees staying empty (`EMPTY` of the next height).
 */
function subtreeRoot(leaves: ReadonlyMap<number, Buffer>, first: number, height: number): Buffer {
  let level: (Buffer | undefined)[] = Array.from({ length: 1 << height }, (_, i) => leaves.get(first + i))
  for (let h = 0; h < height; h++) {
    const empty = EMPTY[h] as Buffer
    const up: (Buffer | undefined)[] = []
    for (let i = 0; i < level.length; i += 2) {
      const [left, right] = [level[i], level[i + 1]]
      up.push(left || right ? node(left ?? empty, right ?? empty) : undefined)
    }
    level = up
  }
  return level[0] ?? (EMPTY[height] as Buffer)
}

/** Builds the content hash of one shard's records (or of a whole day: shard 0 of 1) as its lines come. */
export interface ContentTree {
  /**
   * Whether the line of `address` (the next in address order) starts another bucket than the current one's
   * (always for the first): then the caller gives the lines it holds to `update`, then calls `enter`.
   */
  changes(address: string): boolean
  /** Starts the bucket of `address` (after `changes` said so and the held lines were given). */
  enter(address: string): void
  /** Adds canonical lines (whole lines, in address order) to the current bucket. */
  update(lines: string): void
  /** The root of the shard's subtree, 64 hex digits (finishes the tree: call once). */
  root(): string
}

/**
 * A `ContentTree` for shard `shard` of `shards` (a power of two, at most 4,096): its buckets are
 * `shard * 4096 / shards` .. `(shard + 1) * 4096 / shards - 1`.
 *
 * @example
 * const tree = createContentTree(0, 1)
 * if (tree.changes(address)) tree.enter(address)
 * tree.update(line)
 * tree.root() // the content hash of a day of that one record
 */
export function createContentTree(shard: number, shards: number): ContentTree {
  const height = CONTENT_BUCKET_BITS - Math.log2(shards)
  if (!Number.isInteger(height) || height < 0 || shard < 0 || shard >= shards) {
    throw new Error(`no content subtree for shard ${shard} of ${shards}`)
  }
  const first = shard << height
  const leaves = new Map<number, Buffer>()
  let bucket = -1
  // the current bucket's address prefix ('0x' and three hex digits; none before the first)
  let prefix = '-'
  let hash: Hash | undefined
  const finish = () => {
    if (hash) leaves.set(bucket, hash.digest())
    hash = undefined
  }
  return {
    changes: (address) => !address.startsWith(prefix),
    enter(address) {
      const next = contentBucket(address)
      if (next <= bucket || next < first || next >= first + (1 << height)) {
        throw new Error(`address ${address} out of order or outside shard ${shard} of ${shards}`)
      }
      finish()
      bucket = next
      prefix = address.slice(0, 5)
      hash = createHash('sha256')
    },
    update(lines) {
      if (!hash) throw new Error('content lines given before their bucket')
      hash.update(lines)
    },
    root() {
      finish()
      return subtreeRoot(leaves, first, height).toString('hex')
    },
  }
}

/**
 * The day's content hash from its shards' roots (`ContentTree.root` of shards 0 .. n - 1, in shard order, n a
 * power of two): the same root for any n.
 */
export function dayContentHash(shards: readonly { shard?: number; content_hash: string }[]): string {
  const n = shards.length
  if (n === 0 || n > BUCKETS || !Number.isInteger(Math.log2(n))) {
    throw new Error(`a day of ${n} shards has no content hash (a power of two up to ${BUCKETS})`)
  }
  shards.forEach((s, i) => {
    if (s.shard !== undefined && s.shard !== i) throw new Error(`shard ${s.shard} found at ${i}`)
  })
  let level: Buffer[] = shards.map((s) => Buffer.from(s.content_hash, 'hex'))
  while (level.length > 1) {
    const up: Buffer[] = []
    for (let i = 0; i < level.length; i += 2) up.push(node(level[i] as Buffer, level[i + 1] as Buffer))
    level = up
  }
  return (level[0] as Buffer).toString('hex')
}

/**
 * The content hash of canonical lines given as texts of whole lines in address order (a stored version read
 * back with `COPY ... TO STDOUT`: `records.openContentLines`). The address is each line's third field.
 */
export async function contentHashOfLines(texts: AsyncIterable<string> | Iterable<string>): Promise<string> {
  const tree = createContentTree(0, 1)
  for await (const text of texts) {
    let start = 0
    let held = 0
    while (start < text.length) {
      const end = text.indexOf('\n', start) + 1 || text.length
      const a = text.indexOf('\t', text.indexOf('\t', start) + 1) + 1
      const address = text.slice(a, a + 42)
      if (tree.changes(address)) {
        if (start > held) tree.update(text.slice(held, start))
        held = start
        tree.enter(address)
      }
      start = end
    }
    if (text.length > held) tree.update(text.slice(held))
  }
  return tree.root()
}
