import { isAddress } from 'viem'
import { ValidationError } from './errors.ts'

declare const addressBrand: unique symbol

/** An Ethereum address in its one stored form: `0x` and 40 lower-case hex digits. Made by `toAddress`. */
export type Address = `0x${string}` & { readonly [addressBrand]: true }

/**
 * The stored form of an address its source already validated: an ABI decoder's output (viem checksums what
 * it decodes) or a string checked against `0x` + 40 hex digits. Lower-cases it and does no checksum work
 * (`toAddress` costs a keccak per mixed-case address: ~40 µs, on the follower's path for every log). Anything
 * from outside the service goes through `toAddress`.
 */
export function decodedAddress(address: `0x${string}`): Address {
  return address.toLowerCase() as Address
}

const STORED_FORM = /^0x[0-9a-f]{40}$/

/** The zero address: never a wallet (a mint's sender, nobody's key). */
export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000' as Address

/**
 * Validates a 0x address where it enters (API input, chain data): 40 hex digits, all lower case, all upper
 * case, or mixed case passing EIP-55. Returns it lower case; throws a `ValidationError` naming `field`
 * (reason `invalid_address` or `address_checksum`).
 *
 * @example
 * toAddress('0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549') // '0x8c1bed5b...6549'
 * toAddress('0x8C1BED5B9A0928467C9B1341DA1D7BD5E10B6549') // the same: one case is not mixed case
 */
export function toAddress(address: string, field = 'address'): Address {
  // already in the stored form (most input): nothing to check or copy
  if (STORED_FORM.test(address)) return address as Address
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) {
    throw new ValidationError(`${field} must be 0x followed by 40 hexadecimal digits`, {
      reason: 'invalid_address',
    })
  }
  const hex = address.slice(2)
  const oneCase = hex === hex.toLowerCase() || hex === hex.toUpperCase()
  if (!oneCase && !isAddress(address, { strict: true })) {
    throw new ValidationError(`${field} has mixed case that fails the EIP-55 checksum`, {
      reason: 'address_checksum',
    })
  }
  return address.toLowerCase() as Address
}
