import {
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  type Hex,
  parseAbi,
  RawContractError,
} from 'viem'

/**
 * Custom errors an Allowlist write can revert with, in every version: the Allowlist's (mainnet 0.4.0, 0.5.0 and
 * 1.2.1, and the devnet's names), the AllowlistFirewall's, and the proxy's in front of the Allowlist (mainnet's
 * TUPProxy `CallWhenPaused`, the devnet proxy's). `test/revert-reasons-abi.test.ts` holds it to the real ABIs.
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
  'error InvalidInitialization(uint256 version, uint256 expectedVersion)',
  'error CallWhenPaused()',
  'error AdminCannotCallImplementation()',
  'error InvalidImplementation(address implementation)',
])

type AllowlistErrorName = (typeof allowlistErrorsAbi)[number]['name']

/** One sentence per custom error of `allowlistErrorsAbi`: what the revert means for the operator. */
export const REVERT_MEANINGS: Record<AllowlistErrorName, string> = {
  Unauthorized: 'the sender is not allowed to make this call (the allower key lost its allower role?)',
  InvalidZeroAddress: 'the zero address cannot be given permissions',
  InvalidCount: 'the list of addresses is empty',
  InvalidAlloweeCount: 'the list of addresses is empty',
  MismatchedArrayLengths: 'the address and permission lists differ in length',
  MismatchedAlloweeAndStatusCount: 'the address and permission lists differ in length',
  AttemptToSetDenyPermission: 'an allow change cannot set the DENY bit (only the denier can)',
  AttemptToRemoveDenyPermission: 'the address is denied on the Allowlist; only the denier can lift it',
  Denied: 'the address is denied on the Allowlist',
  InvalidInitialization:
    'the Allowlist implementation is not initialized for this version (an upgrade underway?)',
  CallWhenPaused: "the Allowlist's proxy is paused by the protocol's governance",
  AdminCannotCallImplementation: "the sender is the proxy's admin, which cannot call the implementation",
  InvalidImplementation: "the Allowlist's proxy points at no contract",
}

/**
 * The reverts no retry of the same change can turn into a success: the call is malformed (the zero address, a
 * DENY bit, empty or mismatched lists), or the address is denied (only the denier can lift it, and the wallet and
 * its account then follow the chain into DENIED). Every other revert (a role, a paused proxy, an upgrade underway,
 * a revert without a reason, an unknown error) may pass later and is retried.
 */
const FINAL_REVERTS: ReadonlySet<AllowlistErrorName> = new Set<AllowlistErrorName>([
  'InvalidZeroAddress',
  'InvalidCount',
  'InvalidAlloweeCount',
  'MismatchedArrayLengths',
  'MismatchedAlloweeAndStatusCount',
  'AttemptToSetDenyPermission',
  'AttemptToRemoveDenyPermission',
  'Denied',
])

/** A revert in words, and whether a retry of the same call could ever succeed (`final`: it could not). */
export interface RevertVerdict {
  reason: string
  final: boolean
}

/**
 * Revert data in words and whether it is final (see `FINAL_REVERTS`): `Name(arg, ...): meaning` for a known custom
 * error, `Error(string)` and `Panic` as their message, else `unknown custom error 0x<selector>` (the selector only,
 * never the raw bytes) or `reverted without a reason`.
 *
 * @example
 * revertDataVerdict('0x') // { reason: 'reverted without a reason', final: false }
 */
export function revertDataVerdict(data: Hex): RevertVerdict {
  try {
    const decoded = decodeErrorResult({ abi: allowlistErrorsAbi, data })
    const args = (decoded.args ?? []).map(String).join(', ')
    const name: string = decoded.errorName
    if (name === 'Error') return { reason: `Error(${args})`, final: false }
    if (name === 'Panic') return { reason: `Panic(${args})`, final: false }
    const known = decoded.errorName as AllowlistErrorName
    return { reason: `${known}(${args}): ${REVERT_MEANINGS[known]}`, final: FINAL_REVERTS.has(known) }
  } catch {
    const reason =
      data.length >= 10 ? `unknown custom error ${data.slice(0, 10)}` : 'reverted without a reason'
    return { reason, final: false }
  }
}

/**
 * Revert data in words (see `revertDataVerdict`).
 *
 * @example
 * decodeRevertData('0x8e4a23d6000...f39f') // 'Unauthorized(0xf39F...): the sender is not allowed ...'
 */
export function decodeRevertData(data: Hex): string {
  return revertDataVerdict(data).reason
}

/**
 * The verdict on a failed simulation, call or transaction (see `revertDataVerdict`); an error that is no revert
 * gives its short message, not final.
 *
 * @example
 * revertVerdictOf(simulationError) // { reason: 'AttemptToRemoveDenyPermission(): the address is denied ...', final: true }
 */
export function revertVerdictOf(err: unknown): RevertVerdict {
  if (err instanceof BaseError) {
    const revert = err.walk(
      (e) => e instanceof ContractFunctionRevertedError || e instanceof RawContractError,
    )
    if (revert instanceof ContractFunctionRevertedError) {
      if (revert.raw) return revertDataVerdict(revert.raw)
      if (revert.signature) return revertDataVerdict(revert.signature)
      return { reason: revert.reason ? `Error(${revert.reason})` : revert.shortMessage, final: false }
    }
    const data = (revert as RawContractError | null)?.data
    if (typeof data === 'string') return revertDataVerdict(data)
    if (data && typeof data === 'object' && typeof data.data === 'string') return revertDataVerdict(data.data)
    return { reason: err.shortMessage, final: false }
  }
  return { reason: (err as Error).message, final: false }
}

/**
 * The revert reason of a failed simulation, call or transaction, in words (see `revertVerdictOf`).
 */
export function revertReasonOf(err: unknown): string {
  return revertVerdictOf(err).reason
}
