/**
 * Small checks of JSON-RPC values shared by the log decoder, the log fetcher and the block reads: hex strings,
 * 32-byte hashes, hex quantities, and the short text of an error for messages and logs.
 */
import type { Hex } from 'viem'

/** A 32-byte hash (block, transaction, topic): `0x` and 64 hex digits. */
export const HASH = /^0x[0-9a-fA-F]{64}$/

/** A 20-byte address: `0x` and 40 hex digits. */
export const ADDRESS = /^0x[0-9a-fA-F]{40}$/

const HEX = /^0x[0-9a-fA-F]*$/

/**
 * Whether a value is a hex string (`0x` alone included).
 *
 * @example
 * isHex('0x12') // true
 */
export function isHex(value: unknown): value is Hex {
  return typeof value === 'string' && HEX.test(value)
}

/**
 * A JSON-RPC hex quantity as a bigint, or null when the value is not one.
 *
 * @example
 * quantity('0x7b') // 123n
 * quantity(undefined) // null
 */
export function quantity(value: unknown): bigint | null {
  return typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value) ? BigInt(value) : null
}

/**
 * The short text of an error: viem's `shortMessage` and `details`, else its `message`.
 *
 * @example
 * shortMessage(new Error('socket hang up')) // 'socket hang up'
 */
export function shortMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const e = error as { shortMessage?: unknown; details?: unknown; message?: unknown }
    if (typeof e.shortMessage === 'string') {
      return typeof e.details === 'string' && e.details ? `${e.shortMessage} ${e.details}` : e.shortMessage
    }
    if (typeof e.message === 'string') return e.message
  }
  return String(error)
}
