import type { AddressRange } from '../../db/repos/records.ts'

/** Wallets per shard the day aims at (shards are address ranges, so this is a target, not a bound). */
export const SHARD_WALLETS = 5_000
/** At most this many shards per day (12 bits of the address: the buckets of the day's content tree). */
export const MAX_SHARDS = 4_096
/**
 * At most this many consecutive shards are computed by one job. A shard is an aligned subtree of the day's
 * content tree (`content-hash.ts`: the day's hash is the same for any shard count); a job is the unit of
 * work and retry. Each job costs a few round trips, a COPY
 * each way and a commit, whatever its size: a 10k-holder day of 4 shards is one job, a 1M one of 256 is 16
 * (splitting the small day in two for the inline runner's two shard jobs at once measured no faster).
 */
export const JOB_SHARDS = 16

/**
 * How many shards a day of about `wallets` wallets is cut into: a power of two, so shards are prefixes of
 * the (uniformly distributed) address space.
 *
 * @example
 * shardCount(12_000) // 4
 */
export function shardCount(wallets: number, perShard = SHARD_WALLETS): number {
  let shards = 1
  while (shards < MAX_SHARDS && shards * perShard < wallets) shards *= 2
  return shards
}

/**
 * How many consecutive shards one job of a day of `shards` shards computes (a power of two dividing it), at
 * most `most` (a power of two: JOB_SHARDS, or 1 on PGlite, whose one connection a job's write holds).
 *
 * @example
 * jobSpan(4) // 4: one job
 * jobSpan(256) // 16: 16 jobs
 */
export function jobSpan(shards: number, most = JOB_SHARDS): number {
  return Math.min(most, shards)
}

const hex40 = (value: bigint) => `0x${value.toString(16).padStart(40, '0')}`

/**
 * The address range of shard `shard` of `shards` (a power of two): lo <= address < hi.
 *
 * @example
 * shardRange(1, 2) // { lo: '0x8000…0000', hi: null }
 */
export function shardRange(shard: number, shards: number): AddressRange {
  if (!Number.isInteger(Math.log2(shards)) || shard < 0 || shard >= shards) {
    throw new Error(`invalid shard ${shard} of ${shards}`)
  }
  const bits = BigInt(160 - Math.log2(shards))
  return {
    lo: hex40(BigInt(shard) << bits),
    hi: shard + 1 === shards ? null : hex40(BigInt(shard + 1) << bits),
  }
}

/**
 * The address range of shards `first` .. `first + span - 1` of `shards` (what one job computes).
 *
 * @example
 * spanRange(0, 2, 4) // { lo: '0x0000…0000', hi: '0x8000…0000' }
 */
export function spanRange(first: number, span: number, shards: number): AddressRange {
  if (!Number.isInteger(span) || span < 1 || first + span > shards) {
    throw new Error(`invalid span of ${span} shards from shard ${first} of ${shards}`)
  }
  return { lo: shardRange(first, shards).lo, hi: shardRange(first + span - 1, shards).hi }
}
