import type { AddressRange } from '../../db/repos/records.ts'

/** Wallets per shard the day aims at (shards are address ranges, so this is a target, not a bound). */
export const SHARD_WALLETS = 5_000
/** At most this many shards per day (12 bits of the address). */
export const MAX_SHARDS = 4_096

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
