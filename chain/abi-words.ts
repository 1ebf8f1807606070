/**
 * The fast path of strict log decoding (`log-decoding.ts`): one 32-byte ABI word of a static type decoded
 * without viem's generic decoder and re-encoder, for the types the protocol's events use. It accepts only
 * what the generic path accepts (the canonical encoding of the type) and answers the same value, or
 * undefined: the caller then takes the generic path, which says what is wrong. Measured on a devnet history
 * (10k logs): the generic decode and re-encode cost ~20 µs a log, most of the follower's decoding.
 */
import type { AbiParameter } from 'viem'

/** Decodes one word (64 hex digits, lower case) of one type; undefined when it is not canonical. */
export type WordDecoder = (word: string) => unknown

const ZEROS = '0'.repeat(64)

/** A uint of `bits` bits: the high bits zero; a number up to 48 bits and a bigint above (as viem answers). */
function uintDecoder(bits: number): WordDecoder {
  const zeros = 64 - bits / 4
  return (word) => {
    if (zeros > 0 && !word.startsWith(ZEROS.slice(0, zeros))) return undefined
    return bits > 48 ? BigInt(`0x${word}`) : Number.parseInt(word.slice(zeros), 16)
  }
}

/** bytesN: the bytes left-aligned, the rest zero; the hex of the N bytes (lower case, as viem answers). */
function bytesDecoder(size: number): WordDecoder {
  const zeros = ZEROS.slice(0, 64 - size * 2)
  return (word) => (word.endsWith(zeros) ? `0x${word.slice(0, size * 2)}` : undefined)
}

/**
 * The decoder of one static type's word, or undefined for a type without a fast path (signed ints, dynamic
 * types, tuples: the generic path decodes them). An address comes in the one stored form (lower case,
 * `common/address.ts`), which is what the strict decoder makes of viem's checksummed one.
 *
 * @example
 * wordDecoder({ type: 'uint32' })?.('0'.repeat(62) + '2a') // 42
 * wordDecoder({ type: 'address' })?.('ff'.repeat(32)) // undefined: dirty high bits
 */
export function wordDecoder(param: AbiParameter): WordDecoder | undefined {
  const { type } = param
  if (type === 'address') {
    const prefix = ZEROS.slice(0, 24)
    return (word) => (word.startsWith(prefix) ? `0x${word.slice(24)}` : undefined)
  }
  if (type === 'bool') {
    const prefix = ZEROS.slice(0, 63)
    return (word) =>
      word.startsWith(prefix) ? (word[63] === '1' ? true : word[63] === '0' ? false : undefined) : undefined
  }
  const uint = /^uint(\d*)$/.exec(type)
  if (uint) {
    const bits = uint[1] === '' ? 256 : Number(uint[1])
    return bits >= 8 && bits <= 256 && bits % 8 === 0 ? uintDecoder(bits) : undefined
  }
  const bytes = /^bytes(\d+)$/.exec(type)
  if (bytes) {
    const size = Number(bytes[1])
    return size >= 1 && size <= 32 ? bytesDecoder(size) : undefined
  }
  return undefined
}
