import { createHash } from 'node:crypto'

/** A small seeded PRNG (sfc32) with helpers; the same seed always yields the same sequence. */
export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number
  /** Uniform integer in [0, n). */
  int(n: number): number
  /** True with probability p. */
  chance(p: number): boolean
  /** Uniform float in [min, max). */
  between(min: number, max: number): number
  /** A uniformly chosen element (the array must not be empty). */
  pick<T>(items: readonly T[]): T
  /** An independent generator derived from this seed and a label. */
  fork(label: string): Rng
  /** Numbers drawn so far: `createRng(seed, rng.draws())` continues where this one is (devnet/persistence.ts). */
  draws(): number
}

/**
 * Creates a generator from any seed (number or string), hashed with sha256 into sfc32's 128-bit state;
 * `skip` numbers already drawn (a generator restored from its `draws()`).
 *
 * @example
 * const rng = createRng(42)
 * rng.int(10) // the same value on every run
 */
export function createRng(seed: number | string, skip = 0): Rng {
  const digest = createHash('sha256').update(`lsreport-devnet:${seed}`).digest()
  let a = digest.readUInt32LE(0)
  let b = digest.readUInt32LE(4)
  let c = digest.readUInt32LE(8)
  let d = digest.readUInt32LE(12)
  let drawn = 0
  const sfc32 = (): number => {
    a >>>= 0
    b >>>= 0
    c >>>= 0
    d >>>= 0
    let t = (a + b) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    d = (d + 1) | 0
    t = (t + d) | 0
    c = (c + t) | 0
    return (t >>> 0) / 4294967296
  }
  for (let i = 0; i < 16; i++) sfc32()
  for (let i = 0; i < skip; i++) sfc32()
  drawn = skip
  const next = (): number => {
    drawn += 1
    return sfc32()
  }
  const rng: Rng = {
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    between: (min, max) => min + next() * (max - min),
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error('rng.pick on an empty list')
      return items[Math.floor(next() * items.length)] as T
    },
    fork: (label) => createRng(`${seed}/${label}`),
    draws: () => drawn,
  }
  return rng
}
