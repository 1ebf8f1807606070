import {
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  type Hex,
  parseAbi,
  RawContractError,
} from 'viem'

/**
 * Custom errors the Allowlist reverts with: the devnet contract's names (devnet/contracts/Allowlist.sol) and
 * mainnet AllowlistV1's (`InvalidAlloweeCount`, `MismatchedAlloweeAndStatusCount`, LibErrors'
 * `Unauthorized` / `InvalidZeroAddress`).
 */
export const allowlistErrorsAbi = parseAbi([
  'error Unauthorized(address caller)',
  'error InvalidZeroAddress()',
  'error InvalidCount()',
  'error InvalidAlloweeCount()',
  'error MismatchedArrayLengths()',
  'error MismatchedAlloweeAndStatusCount()',
  'error AttemptToSetDenyPermission()',
  'error AttemptToRemoveDenyPermission()',
  'error Denied(address account)',
])

/** One sentence per custom error of `allowlistErrorsAbi`: what the revert means for the operator. */
export const REVERT_MEANINGS: Record<(typeof allowlistErrorsAbi)[number]['name'], string> = {
  Unauthorized: 'the sender is not allowed to make this call (the allower key lost its allower role?)',
  InvalidZeroAddress: 'the zero address cannot be given permissions',
  InvalidCount: 'the list of addresses is empty',
  InvalidAlloweeCount: 'the list of addresses is empty',
  MismatchedArrayLengths: 'the address and permission lists differ in length',
  MismatchedAlloweeAndStatusCount: 'the address and permission lists differ in length',
  AttemptToSetDenyPermission: 'an allow change cannot set the DENY bit (only the denier can)',
  AttemptToRemoveDenyPermission: 'the address is denied on the Allowlist; only the denier can lift it',
  Denied: 'the address is denied on the Allowlist',
}

/**
 * Revert data in words: `Name(arg, ...): meaning` for a known custom error, `Error(string)` and `Panic`
 * as their message, else `unknown custom error 0x<selector>` (the selector only, never the raw bytes).
 *
 * @example
 * decodeRevertData('0x8e4a23d6000...f39f') // 'Unauthorized(0xf39F...): the sender is not allowed ...'
 */
export function decodeRevertData(data: Hex): string {
  try {
    const decoded = decodeErrorResult({ abi: allowlistErrorsAbi, data })
    const args = (decoded.args ?? []).map(String).join(', ')
    const name: string = decoded.errorName
    if (name === 'Error') return `Error(${args})`
    if (name === 'Panic') return `Panic(${args})`
    const meaning = REVERT_MEANINGS[decoded.errorName as keyof typeof REVERT_MEANINGS]
    return `${decoded.errorName}(${args}): ${meaning}`
  } catch {
    return data.length >= 10 ? `unknown custom error ${data.slice(0, 10)}` : 'reverted without a reason'
  }
}

/**
 * The revert reason of a failed simulation, call or transaction, in words (see `decodeRevertData`); any other
 * error gives its short message.
 */
export function revertReasonOf(err: unknown): string {
  if (err instanceof BaseError) {
    const revert = err.walk(
      (e) => e instanceof ContractFunctionRevertedError || e instanceof RawContractError,
    )
    if (revert instanceof ContractFunctionRevertedError) {
      if (revert.raw) return decodeRevertData(revert.raw)
      if (revert.signature) return decodeRevertData(revert.signature)
      return revert.reason ? `Error(${revert.reason})` : revert.shortMessage
    }
    const data = (revert as RawContractError | null)?.data
    if (typeof data === 'string') return decodeRevertData(data)
    if (data && typeof data === 'object' && typeof data.data === 'string') return decodeRevertData(data.data)
    return err.shortMessage
  }
  return (err as Error).message
}
