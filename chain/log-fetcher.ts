/**
 * Log fetching in adaptive block ranges, with retries; every log is decoded strictly (`log-decoding.ts`).
 *
 * The fetcher walks `[fromBlock, toBlock]` in contiguous chunks. A chunk the node refuses as too large
 * (too many results, range too wide, response too big, JSON-RPC -32005, a timeout; `range-errors.ts` knows
 * the providers' wordings) is retried from the same start at the range the node suggests or allows (Alchemy's
 * and Infura's `[0x.., 0x..]`, "Max range: 800") when that is smaller, else at half the range; a stated cap is
 * kept as a ceiling for good. A chunk that comes back quickly with few logs doubles the range for the next
 * one (up to `maxRange`). Transient failures (connection reset, HTTP 429/5xx) retry the same chunk with
 * backoff. A chunk is yielded only once it was fetched and decoded completely, so no block is skipped or
 * read twice, and logs come out in (blockNumber, logIndex) order.
 */
import { type Abi, type Address, type Hex, toHex } from 'viem'
import type { Logger } from '../common/logger.ts'
import { getHeadBlockNumber } from './blocks.ts'
import type { ChainClient } from './client.ts'
import { BlockNotFoundError, ChainError, ChainRpcError, InvalidLogError, LogRangeError } from './errors.ts'
import {
  compareLogs,
  createLogDecoder,
  type DecodedLog,
  eventSelectors,
  type LogMeta,
  type RawLog,
} from './log-decoding.ts'
import { nextRange, rangeLimitOf } from './range-errors.ts'
import { isTimeoutError, isTransientRpcError, type RetryOptions, withRetry } from './retry.ts'
import { shortMessage } from './rpc-values.ts'

/**
 * One contiguous block range, fetched completely (`logs` may be empty). Parameterized by the log type (not
 * the ABI) so that a chunk of a narrow ABI is also a `LogChunk` of any log.
 */
export interface LogChunk<log extends LogMeta = DecodedLog> {
  fromBlock: bigint
  toBlock: bigint
  logs: log[]
}

/** Options of createLogFetcher: the client, the range bounds and growth rule, and retry settings. */
export interface LogFetcherOptions {
  client: ChainClient
  logger?: Logger
  /** Block range of the first request. Default 2000. */
  initialRange?: bigint
  /** Smallest range tried before giving up with LogRangeError. Default 1. */
  minRange?: bigint
  /** Largest range the fetcher grows to. Default 50 000. */
  maxRange?: bigint
  /** Retries of a chunk on transient errors (connection reset, 429, 5xx). Default 6. */
  retries?: number
  /** First backoff delay. Default 250 ms. */
  baseDelayMs?: number
  /** Largest backoff delay. Default 10 000 ms. */
  maxDelayMs?: number
  /** A chunk widens the range only if it returned fewer logs than this. Default 2500. */
  growBelowLogs?: number
  /** ... and answered faster than this. Default 2000 ms. */
  growBelowMs?: number
  /**
   * After a shrink the range stays at or below the size that worked for this many chunks, then probes a
   * wider range again (log density changes along the chain). Default 16.
   */
  probeAfter?: number
  /** Check that `toBlock` is not past the node's head before fetching (one eth_blockNumber). Default true. */
  checkHead?: boolean
  /** Random source for the backoff jitter (tests pass a seeded one). */
  random?: () => number
}

/** What to fetch: contracts, the ABI whose events are requested, and the block range. */
export interface FetchLogsParams<abi extends Abi> {
  /** One contract or several (one request covers them all). */
  address: Address | readonly Address[]
  /** Every event of the ABI is requested (topic0 = any of their selectors) and decoded. */
  abi: abi
  fromBlock: bigint
  toBlock: bigint
  /** Called with each chunk, in order, before the next one is fetched. */
  onChunk?: (chunk: LogChunk<DecodedLog<abi>>) => void | Promise<void>
  signal?: AbortSignal
}

/** The adaptive log fetcher (see the file comment); its learned range persists across calls. */
export interface LogFetcher {
  /**
   * Yields contiguous chunks covering exactly `[fromBlock, toBlock]` in ascending order, empty ones included,
   * so a consumer can persist its progress after each chunk.
   */
  iterateLogs<const abi extends Abi>(
    params: FetchLogsParams<abi>,
  ): AsyncGenerator<LogChunk<DecodedLog<abi>>, void, undefined>
  /** All logs of `[fromBlock, toBlock]`, in (blockNumber, logIndex) order. */
  fetchLogs<const abi extends Abi>(params: FetchLogsParams<abi>): Promise<DecodedLog<abi>[]>
  /** The block range the next chunk will request (adapts as chunks succeed or are refused). */
  readonly range: bigint
}

type Verdict = 'shrink' | 'retry' | 'fatal'

/**
 * Creates the adaptive log fetcher (see the file comment). The learned range is kept across calls.
 *
 * @example
 * const fetcher = createLogFetcher({ client, logger })
 * for await (const chunk of fetcher.iterateLogs({ address: river, abi: riverAbi, fromBlock, toBlock })) {
 *   await store(chunk.logs)
 *   await saveCursor(chunk.toBlock)
 * }
 */
export function createLogFetcher(options: LogFetcherOptions): LogFetcher {
  const { client, logger } = options
  const minRange = options.minRange ?? 1n
  const maxRange = options.maxRange ?? 50_000n
  if (minRange < 1n || maxRange < minRange) {
    throw new ChainError('invalid log fetcher ranges', {
      details: { min_range: minRange.toString(), max_range: maxRange.toString() },
    })
  }
  const clamp = (value: bigint) => (value < minRange ? minRange : value > maxRange ? maxRange : value)
  const retries = options.retries ?? 6
  const growBelowLogs = options.growBelowLogs ?? 2500
  const growBelowMs = options.growBelowMs ?? 2000
  const probeAfter = options.probeAfter ?? 16
  const checkHead = options.checkHead ?? true
  const retryDelays = {
    baseDelayMs: options.baseDelayMs ?? 250,
    maxDelayMs: options.maxDelayMs ?? 10_000,
    ...(options.random ? { random: options.random } : {}),
  }

  let range = clamp(options.initialRange ?? 2000n)
  /** After a shrink: the range that worked, not exceeded until `probeAfter` chunks passed. */
  let ceiling: bigint | undefined
  let sinceShrink = 0
  /** The widest span the node said it accepts at all ("Max range: 800"): never exceeded again. */
  let nodeMaxRange: bigint | undefined
  const grow = (value: bigint) => {
    const grown = clamp(value)
    return nodeMaxRange !== undefined && grown > nodeMaxRange ? nodeMaxRange : grown
  }

  async function getLogsOnce(
    addresses: readonly Address[],
    selectors: Hex[],
    from: bigint,
    to: bigint,
  ): Promise<unknown[]> {
    const result: unknown = await client.request(
      {
        method: 'eth_getLogs',
        params: [
          {
            address: addresses.length === 1 ? addresses[0] : [...addresses],
            topics: [selectors],
            fromBlock: toHex(from),
            toBlock: toHex(to),
          },
        ],
      },
      { retryCount: 0 },
    )
    if (!Array.isArray(result)) {
      throw new ChainRpcError(`eth_getLogs returned no list for blocks ${from}..${to}`, {
        details: { from_block: from.toString(), to_block: to.toString() },
      })
    }
    return result
  }

  async function* iterateLogs<const abi extends Abi>(
    params: FetchLogsParams<abi>,
  ): AsyncGenerator<LogChunk<DecodedLog<abi>>, void, undefined> {
    const addresses = (typeof params.address === 'string' ? [params.address] : [...params.address]).map(
      (a) => a.toLowerCase() as Address,
    )
    if (addresses.length === 0) throw new ChainError('fetchLogs needs at least one address')
    const selectors = eventSelectors(params.abi)
    if (selectors.length === 0) throw new ChainError('fetchLogs needs an ABI with at least one event')
    const decode = createLogDecoder(params.abi)
    const wanted = new Set(addresses)
    const { fromBlock, toBlock, signal } = params
    if (fromBlock < 0n || toBlock < fromBlock) {
      if (toBlock === fromBlock - 1n) return // an empty range: nothing to do
      throw new ChainError(`invalid block range ${fromBlock}..${toBlock}`, {
        details: { from_block: fromBlock.toString(), to_block: toBlock.toString() },
      })
    }
    const retryBase: RetryOptions = { retries, ...retryDelays, ...(signal ? { signal } : {}) }

    if (checkHead) {
      const head = await getHeadBlockNumber(client, retryBase)
      if (toBlock > head) {
        throw new BlockNotFoundError(`toBlock ${toBlock} is past the node's head ${head}`, {
          details: { to_block: toBlock.toString(), head: head.toString() },
        })
      }
    }

    let from = fromBlock
    while (from <= toBlock) {
      signal?.throwIfAborted()
      const to = from + range - 1n > toBlock ? toBlock : from + range - 1n
      const size = to - from + 1n
      const classify = (error: unknown): Verdict => {
        if (rangeLimitOf(error)) return 'shrink'
        if (isTimeoutError(error)) return size > minRange ? 'shrink' : 'retry'
        return isTransientRpcError(error) ? 'retry' : 'fatal'
      }
      const started = performance.now()
      let raws: unknown[]
      try {
        raws = await withRetry(() => getLogsOnce(addresses, selectors, from, to), {
          ...retryBase,
          isRetryable: (error) => classify(error) === 'retry',
          onRetry: ({ error, attempt, delayMs }) =>
            logger?.warn(
              {
                from_block: from.toString(),
                to_block: to.toString(),
                attempt,
                delay_ms: delayMs,
                error: shortMessage(error),
              },
              'eth_getLogs retried',
            ),
        })
      } catch (error) {
        if (error instanceof ChainError || signal?.aborted) throw error
        const details = {
          from_block: from.toString(),
          to_block: to.toString(),
          addresses,
          error: shortMessage(error),
        }
        const verdict = classify(error)
        if (verdict === 'shrink') {
          const limit = rangeLimitOf(error)
          if (size <= minRange) {
            throw new LogRangeError(`the node refused blocks ${from}..${to} even at the smallest range`, {
              details,
              cause: error,
            })
          }
          if (limit?.maxRange !== undefined) {
            const cap = limit.maxRange < minRange ? minRange : limit.maxRange
            nodeMaxRange = nodeMaxRange === undefined || cap < nodeMaxRange ? cap : nodeMaxRange
          }
          range = grow(nextRange(size, limit))
          ceiling = range
          sinceShrink = 0
          logger?.warn(
            {
              ...details,
              new_range: range.toString(),
              limit_source: limit?.source ?? 'timeout',
              ...(limit?.suggestedRange === undefined
                ? {}
                : { suggested_range: limit.suggestedRange.toString() }),
              ...(limit?.maxRange === undefined ? {} : { node_max_range: limit.maxRange.toString() }),
            },
            'log block range shrunk',
          )
          continue
        }
        const suffix = verdict === 'retry' ? ` after ${retries} retries` : ''
        throw new ChainRpcError(
          `eth_getLogs failed for blocks ${from}..${to}${suffix}: ${shortMessage(error)}`,
          {
            details,
            cause: error,
          },
        )
      }
      const elapsedMs = performance.now() - started
      const logs = decodeChunk(raws, decode, wanted, from, to)
      logger?.debug(
        {
          from_block: from.toString(),
          to_block: to.toString(),
          log_count: logs.length,
          elapsed_ms: Math.round(elapsedMs),
        },
        'logs fetched',
      )
      if (size === range && logs.length < growBelowLogs && elapsedMs < growBelowMs) {
        sinceShrink += 1
        if (ceiling !== undefined && sinceShrink >= probeAfter) ceiling = undefined
        const grown = grow(range * 2n)
        range = ceiling !== undefined && grown > ceiling ? ceiling : grown
      }
      const chunk: LogChunk<DecodedLog<abi>> = { fromBlock: from, toBlock: to, logs }
      await params.onChunk?.(chunk)
      yield chunk
      from = to + 1n
    }
  }

  return {
    iterateLogs,
    async fetchLogs(params) {
      const all: DecodedLog<(typeof params)['abi']>[] = []
      for await (const chunk of iterateLogs(params)) all.push(...chunk.logs)
      return all
    },
    get range() {
      return range
    },
  }
}

/**
 * Decodes and validates one chunk: every log lies in [from, to], comes from a requested address, appears
 * once, and agrees with the other logs of its block on the block hash. Returns them in order.
 */
function decodeChunk<abi extends Abi>(
  raws: unknown[],
  decode: (raw: RawLog) => DecodedLog<abi>,
  wanted: Set<string>,
  from: bigint,
  to: bigint,
): DecodedLog<abi>[] {
  const logs: DecodedLog<abi>[] = []
  const blockHashes = new Map<bigint, string>()
  for (const raw of raws) {
    if (typeof raw !== 'object' || raw === null) {
      throw new InvalidLogError('not an object', { blockNumber: null, transactionHash: null, logIndex: null })
    }
    const log = decode(raw as RawLog)
    const position = {
      blockNumber: log.blockNumber,
      transactionHash: log.transactionHash,
      logIndex: log.logIndex,
    }
    if (log.blockNumber < from || log.blockNumber > to) {
      throw new InvalidLogError(`outside the requested blocks ${from}..${to}`, position)
    }
    if (!wanted.has(log.address))
      throw new InvalidLogError(`from unrequested address ${log.address}`, position)
    const known = blockHashes.get(log.blockNumber)
    if (known === undefined) blockHashes.set(log.blockNumber, log.blockHash)
    else if (known !== log.blockHash) {
      throw new InvalidLogError(
        `block hash ${log.blockHash} differs from ${known} in the same response`,
        position,
      )
    }
    logs.push(log)
  }
  logs.sort(compareLogs)
  for (let i = 1; i < logs.length; i++) {
    const a = logs[i - 1]!
    const b = logs[i]!
    if (a.blockNumber === b.blockNumber && a.logIndex === b.logIndex) {
      throw new InvalidLogError('returned twice in one response', {
        blockNumber: b.blockNumber,
        transactionHash: b.transactionHash,
        logIndex: b.logIndex,
      })
    }
  }
  return logs
}
