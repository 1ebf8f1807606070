import { concatHex, type Hash, type Hex, keccak256, pad } from 'viem'
import { decodedAddress, type Address as StoredAddress } from '../common/address.ts'
import { decodeAllowlistWrite } from './allowlist-calls.ts'

/**
 * Recovers the accounts of a `SetAllowlistPermissions` log of the first mainnet Allowlist implementation (0.4.0),
 * which declared `address[] indexed accounts` (the log holds only keccak256 of the accounts). Its write was
 * `allow(address[] accounts, uint256[] permissions)` (selector 0xe580d994): when the transaction's calldata is
 * that call (sent to the Allowlist, or to its firewall, which forwards calldata unchanged) or a Safe's
 * `execTransaction` wrapping it, the accounts are returned (lower case, `common/address.ts`) if their hash and
 * the permissions match the log; otherwise undefined (another wrapper, whose calldata hides the inner call).
 *
 * @example
 * recoverLegacyAllowlistAccounts(tx.input, { accountsHash: log.args.accountsHash, permissions: log.args.permissions })
 */
export function recoverLegacyAllowlistAccounts(
  input: Hex,
  log: { accountsHash: Hash; permissions: readonly bigint[] },
): StoredAddress[] | undefined {
  const call = decodeAllowlistWrite(input)
  if (call?.functionName !== 'allow') return undefined
  const { accounts, permissions } = call
  // an indexed dynamic array is hashed as its elements, each padded to 32 bytes, without a length
  const hash = keccak256(accounts.length === 0 ? '0x' : concatHex(accounts.map((a) => pad(a, { size: 32 }))))
  if (hash.toLowerCase() !== log.accountsHash.toLowerCase()) return undefined
  if (permissions.length !== log.permissions.length || permissions.some((p, i) => p !== log.permissions[i])) {
    return undefined
  }
  return accounts.map(decodedAddress)
}
