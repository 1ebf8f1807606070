import { encodeFunctionData, parseAbi, zeroAddress } from 'viem'
import { describe, expect, test } from 'vitest'
import { PERMISSION } from '../common/permissions.ts'
import { allowlistAbi, allowlistLegacyAbi } from './abi.ts'
import { decodeAllowlistWrite, storedPermissions, writeMatches } from './allowlist-calls.ts'

const A = '0x00000000000000000000000000000000000000A1' as const
const B = '0x00000000000000000000000000000000000000b2' as const
const DENY = PERMISSION.DENY

describe('decodeAllowlistWrite', () => {
  test("behavior: reads every version's write, directly or inside a Safe execTransaction; anything else is undefined", () => {
    const allow = encodeFunctionData({ abi: allowlistLegacyAbi, functionName: 'allow', args: [[A], [5n]] })
    const deny = encodeFunctionData({
      abi: allowlistAbi,
      functionName: 'setDenyPermissions',
      args: [
        [A, B],
        [DENY, 0n],
      ],
    })
    expect(decodeAllowlistWrite(allow)).toEqual({ functionName: 'allow', accounts: [A], permissions: [5n] })
    expect(decodeAllowlistWrite(deny)?.functionName).toBe('setDenyPermissions')
    const safe = encodeFunctionData({
      abi: parseAbi([
        'function execTransaction(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas, uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, bytes signatures) payable returns (bool)',
      ]),
      functionName: 'execTransaction',
      args: [A, 0n, deny, 0, 0n, 0n, 0n, zeroAddress, zeroAddress, '0x'],
    })
    expect(decodeAllowlistWrite(safe)).toEqual({
      functionName: 'setDenyPermissions',
      accounts: [A, B],
      permissions: [DENY, 0n],
    })
    const read = encodeFunctionData({ abi: allowlistAbi, functionName: 'getPermissions', args: [A] })
    expect(decodeAllowlistWrite(read)).toBeUndefined()
    expect(decodeAllowlistWrite('0x')).toBeUndefined()
  })
})

describe('storedPermissions', () => {
  test('behavior: allow and setAllowPermissions store the value; setDenyPermissions stores exactly DENY or 0 (a lift)', () => {
    expect(storedPermissions('allow', DENY | 1n)).toBe(DENY | 1n)
    expect(storedPermissions('setAllowPermissions', 5n)).toBe(5n)
    expect(storedPermissions('setDenyPermissions', DENY | 5n)).toBe(DENY)
    expect(storedPermissions('setDenyPermissions', DENY)).toBe(DENY)
    expect(storedPermissions('setDenyPermissions', 5n)).toBe(0n)
    expect(storedPermissions('setDenyPermissions', 0n)).toBe(0n)
  })
})

describe('writeMatches', () => {
  test('behavior: the same accounts (any case) and permissions in order match; any difference does not', () => {
    const write = { functionName: 'allow' as const, accounts: [A, B], permissions: [1n, 2n] }
    expect(writeMatches(write, { accounts: [A.toLowerCase(), B], permissions: [1n, 2n] })).toBe(true)
    expect(writeMatches(write, { accounts: [B, A], permissions: [1n, 2n] })).toBe(false)
    expect(writeMatches(write, { accounts: [A, B], permissions: [1n, 3n] })).toBe(false)
    expect(writeMatches(write, { accounts: [A], permissions: [1n] })).toBe(false)
  })
})
