import { getAddress } from 'viem'
import { describe, expect, test } from 'vitest'
import { decodedAddress, toAddress } from './address.ts'

const CHECKSUMMED = '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549'
const LOWER = '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549'

describe('the stored form of an address', () => {
  test('behavior: toAddress takes any one case or a valid EIP-55 mix, refuses a bad mix or a malformed string', () => {
    expect(toAddress(CHECKSUMMED)).toBe(LOWER)
    expect(toAddress(LOWER)).toBe(LOWER)
    expect(toAddress(LOWER.toUpperCase().replace('0X', '0x'))).toBe(LOWER)
    expect(() => toAddress('0x8C1BEd5b9a0928467c9B1341Da1D7BD5e10b6549', 'wallet')).toThrow(
      /wallet has mixed case that fails the EIP-55 checksum/,
    )
    expect(() => toAddress('0x1234')).toThrow(/0x followed by 40 hexadecimal digits/)
  })

  test('behavior: decodedAddress gives what toAddress gives for a decoder output, without a checksum check', () => {
    for (let i = 1; i < 200; i++) {
      const decoded = getAddress(
        `0x${(BigInt(i) * 0x9e3779b97f4a7c15n).toString(16).padStart(40, 'a').slice(-40)}`,
      )
      expect(decodedAddress(decoded)).toBe(toAddress(decoded))
    }
  })
})
