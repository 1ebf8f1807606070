import { LsReportError } from '../common/errors.ts'

/** Base class of the errors raised by `chain/`. */
export class ChainError extends LsReportError {
  override name = 'ChainError'
}

/**
 * A JSON-RPC call failed for good: a permanent error (invalid params, revert, HTTP 4xx) or a transient one
 * that outlived its retries. `cause` is the viem error; `details` name the method and block range.
 *
 * @example
 * throw new ChainRpcError('eth_getLogs failed for blocks 100..199', { details: { from_block: '100' }, cause })
 */
export class ChainRpcError extends ChainError {
  override name = 'ChainRpcError'
}

/**
 * The node refused a block range even at the fetcher's smallest range (too many results, response too large).
 * Lower `minRange` cannot help: use another RPC provider or a narrower address/topic filter.
 */
export class LogRangeError extends ChainError {
  override name = 'LogRangeError'
}

/** A block the caller asked for does not exist (yet) on the node, or a range reaches past the head. */
export class BlockNotFoundError extends ChainError {
  override name = 'BlockNotFoundError'
}

/** Where a log sits on chain, carried by every log validation error. */
export interface LogPosition {
  blockNumber: bigint | null
  transactionHash: string | null
  logIndex: number | null
}

function describePosition(position: LogPosition): string {
  return `block ${position.blockNumber ?? '?'}, tx ${position.transactionHash ?? '?'}, log index ${position.logIndex ?? '?'}`
}

/**
 * A log returned by the node breaks a structural rule: a field is missing, it is `removed`, it sits outside
 * the requested range or address set, or it is duplicated. The message names block, tx and log index.
 */
export class InvalidLogError extends ChainError {
  override name = 'InvalidLogError'
  readonly position: LogPosition

  constructor(reason: string, position: LogPosition, options: { details?: Record<string, unknown> } = {}) {
    super(`invalid log at ${describePosition(position)}: ${reason}`, {
      details: { ...options.details, ...positionDetails(position), reason },
    })
    this.position = position
  }
}

/**
 * A log whose topic0 matches an event of the ABI does not decode strictly against it (wrong topic count,
 * data too short or not canonically encoded). The message names block, tx and log index.
 *
 * @example
 * // LogDecodeError: could not decode Transfer at block 123, tx 0xab.., log index 4: data size of 2 bytes is too small
 */
export class LogDecodeError extends ChainError {
  override name = 'LogDecodeError'
  readonly position: LogPosition
  readonly eventName: string | undefined

  constructor(
    reason: string,
    position: LogPosition,
    options: { eventName?: string; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(`could not decode ${options.eventName ?? 'log'} at ${describePosition(position)}: ${reason}`, {
      details: { ...options.details, ...positionDetails(position), event_name: options.eventName, reason },
      cause: options.cause,
    })
    this.position = position
    this.eventName = options.eventName
  }
}

function positionDetails(position: LogPosition): Record<string, unknown> {
  return {
    block_number: position.blockNumber?.toString() ?? null,
    transaction_hash: position.transactionHash,
    log_index: position.logIndex,
  }
}

/** The consensus-layer source (Beacon API or the devnet's facts file) is unreachable or answered nonsense. */
export class ConsensusUnavailableError extends ChainError {
  override name = 'ConsensusUnavailableError'
}

/**
 * The allowlist writer's key can write the Allowlist neither directly (it is not the allower) nor through the
 * allower when that is the protocol's firewall (neither its admin nor its executor allowed the write). The message
 * names the key, the Allowlist and its allower.
 */
export class AllowlistWriteRefusedError extends ChainError {
  override name = 'AllowlistWriteRefusedError'
}

/**
 * A transaction sent has no receipt within the wait: it may still be mined (the next pass settles it by its
 * hash). Retryable.
 */
export class ReceiptTimeoutError extends ChainError {
  override name = 'ReceiptTimeoutError'
}
