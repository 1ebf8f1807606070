import { type Address, decodeFunctionData, type Hex, parseAbi } from 'viem'
import { PERMISSION } from '../common/permissions.ts'
import { allowlistAbi, allowlistLegacyAbi } from './abi.ts'

/**
 * A Safe multisig's `execTransaction`: an Allowlist write sent by a Safe (directly or through the Allowlist's
 * firewall) carries the inner call as its `data`.
 */
const safeAbi = parseAbi([
  'function execTransaction(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas, uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, bytes signatures) payable returns (bool)',
])

const writesAbi = [...allowlistAbi, ...allowlistLegacyAbi]

/** The Allowlist's writes across its versions: `allow` (0.4.0, 0.5.0), `setAllowPermissions` and `setDenyPermissions` (1.2.1). */
export type AllowlistWriteName = 'allow' | 'setAllowPermissions' | 'setDenyPermissions'

/** An Allowlist write decoded from a transaction's calldata. */
export interface AllowlistWrite {
  functionName: AllowlistWriteName
  accounts: readonly Address[]
  permissions: readonly bigint[]
}

function decodeWrite(input: Hex): AllowlistWrite | undefined {
  try {
    const decoded = decodeFunctionData({ abi: writesAbi, data: input })
    if (
      decoded.functionName !== 'allow' &&
      decoded.functionName !== 'setAllowPermissions' &&
      decoded.functionName !== 'setDenyPermissions'
    ) {
      return undefined
    }
    const [accounts, permissions] = decoded.args as readonly [readonly Address[], readonly bigint[]]
    return { functionName: decoded.functionName, accounts, permissions }
  } catch {
    return undefined
  }
}

/**
 * The Allowlist write a transaction's calldata makes: the call itself (sent to the Allowlist, or to its firewall,
 * which forwards calldata unchanged) or a Safe's `execTransaction` wrapping it; undefined for anything else (a
 * wrapper whose calldata hides the inner call).
 *
 * @example
 * decodeAllowlistWrite(tx.input)?.functionName // 'setDenyPermissions'
 */
export function decodeAllowlistWrite(input: Hex): AllowlistWrite | undefined {
  const direct = decodeWrite(input)
  if (direct) return direct
  try {
    return decodeWrite(decodeFunctionData({ abi: safeAbi, data: input }).args[2])
  } catch {
    return undefined
  }
}

/**
 * What the Allowlist stores for one entry of a write (the event carries the value as passed): `allow` and
 * `setAllowPermissions` store it as given; 1.2.1's `setDenyPermissions` stores exactly DENY when the value has
 * the DENY bit, else 0, so a deny is lifted by a value without it.
 *
 * @example
 * storedPermissions('setDenyPermissions', PERMISSION.DENY | 1n) // PERMISSION.DENY
 * storedPermissions('setDenyPermissions', 5n) // 0n (the deny is lifted)
 */
export function storedPermissions(write: AllowlistWriteName, value: bigint): bigint {
  if (write !== 'setDenyPermissions') return value
  return (value & PERMISSION.DENY) === PERMISSION.DENY ? PERMISSION.DENY : 0n
}

/**
 * Whether a decoded write is the call that emitted a log: the same accounts (compared lower case) and the same
 * permissions, in order.
 */
export function writeMatches(
  write: AllowlistWrite,
  log: { accounts: readonly string[]; permissions: readonly bigint[] },
): boolean {
  return (
    write.accounts.length === log.accounts.length &&
    write.permissions.length === log.permissions.length &&
    write.accounts.every((a, i) => a.toLowerCase() === log.accounts[i]?.toLowerCase()) &&
    write.permissions.every((p, i) => p === log.permissions[i])
  )
}
