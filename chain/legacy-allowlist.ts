import { type Address, concatHex, decodeFunctionData, type Hash, type Hex, keccak256, pad } from 'viem'
import { decodedAddress, type Address as StoredAddress } from '../common/address.ts'
import { allowlistAbi } from './abi.ts'

/**
 * Recovers the accounts of a `SetAllowlistPermissions` log of the first mainnet Allowlist implementation,
 * which declared `address[] indexed accounts` (the log holds only keccak256 of the accounts). When the
 * transaction called `setAllowPermissions(accounts, permissions)` directly, its calldata has them: they are
 * returned (lower case, `common/address.ts`) when their hash and the permissions match the log, else
 * undefined (e.g. a call through a multisig, whose calldata wraps the inner call).
 *
 * @example
 * recoverLegacyAllowlistAccounts(tx.input, { accountsHash: log.args.accountsHash, permissions: log.args.permissions })
 */
export function recoverLegacyAllowlistAccounts(
  input: Hex,
  log: { accountsHash: Hash; permissions: readonly bigint[] },
): StoredAddress[] | undefined {
  let decoded: ReturnType<typeof decodeFunctionData<typeof allowlistAbi>>
  try {
    decoded = decodeFunctionData({ abi: allowlistAbi, data: input })
  } catch {
    return undefined
  }
  if (decoded.functionName !== 'setAllowPermissions') return undefined
  const [accounts, permissions] = decoded.args as readonly [readonly Address[], readonly bigint[]]
  // an indexed dynamic array is hashed as its elements, each padded to 32 bytes, without a length
  const hash = keccak256(accounts.length === 0 ? '0x' : concatHex(accounts.map((a) => pad(a, { size: 32 }))))
  if (hash.toLowerCase() !== log.accountsHash.toLowerCase()) return undefined
  if (permissions.length !== log.permissions.length || permissions.some((p, i) => p !== log.permissions[i])) {
    return undefined
  }
  return accounts.map(decodedAddress)
}
