/**
 * Log fetching in adaptive block ranges, with retries, and strict decoding of every log to a typed record
 * that carries its block, tx and log index.
 *
 * The fetcher walks `[fromBlock, toBlock]` in contiguous chunks. A chunk the node refuses as too large
 * (too many results, range too wide, response too big, JSON-RPC -32005, a timeout) is retried at half the
 * range from the same start; a chunk that comes back quickly with few logs doubles the range for the next
 * one (up to `maxRange`). Transient failures (connection reset, HTTP 429/5xx) retry the same chunk with
 * backoff. A chunk is yielded only once it was fetched and decoded completely, so no block is skipped or
 * read twice, and logs come out in (blockNumber, logIndex) order.
 */
import {
  type Abi,
  type AbiEvent,
  type AbiParameter,
  type Address,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type DecodeEventLogReturnType,
  decodeAbiParameters,
  encodeAbiParameters,
  type Hash,
  type Hex,
  parseAbiItem,
  type ReadContractParameters,
  type ReadContractReturnType,
  toEventSelector,
  toHex,
} from 'viem'
import type { Logger } from '../common/logger.ts'
import type { ChainClient } from './client.ts'
import {
  BlockNotFoundError,
  ChainError,
  ChainRpcError,
  InvalidLogError,
  LogDecodeError,
  type LogPosition,
  LogRangeError,
} from './errors.ts'
import {
  isRangeLimitError,
  isTimeoutError,
  isTransientRpcError,
  type RetryOptions,
  withRetry,
} from './retry.ts'

/** Where a decoded log sits on chain. `address` is lower case. */
export interface LogMeta {
  address: Address
  blockNumber: bigint
  blockHash: Hash
  transactionHash: Hash
  transactionIndex: number
  logIndex: number
}

/** The event union of an ABI as viem decodes it (bigint for uint/int, checksummed addresses). */
export type DecodedEvent<abi extends Abi> = Abi extends abi
  ? { eventName: string; args: Record<string, unknown> | readonly unknown[] | undefined }
  : DecodeEventLogReturnType<abi, undefined, Hex[], Hex, true>

/**
 * A `SetAllowlistPermissions` log of the very first mainnet Allowlist implementation, which declared
 * `address[] indexed accounts`: its topic1 is the keccak256 of the accounts (the addresses are not in the
 * log) and its data holds only the permissions. Such logs do not decode against the current ABI; they come
 * back flagged, with what they carry, instead of failing the fetch. The accounts must be recovered elsewhere
 * (the transaction's calldata, or `getPermissions` reads).
 */
export interface LegacyAllowlistPermissions {
  eventName: 'SetAllowlistPermissions'
  legacyIndexed: true
  args: { accountsHash: Hash; permissions: readonly bigint[] }
}

/**
 * One validated, decoded log. Narrow on `eventName` (and `legacyIndexed` for the allowlist quirk).
 *
 * @example
 * if (log.eventName === 'Transfer') log.args.value // bigint
 */
export type DecodedLog<abi extends Abi = Abi> = LogMeta &
  ((DecodedEvent<abi> & { legacyIndexed?: never }) | LegacyAllowlistPermissions)

/**
 * One contiguous block range, fetched completely (`logs` may be empty). Parameterized by the log type (not
 * the ABI) so that a chunk of a narrow ABI is also a `LogChunk` of any log.
 */
export interface LogChunk<log extends LogMeta = DecodedLog> {
  fromBlock: bigint
  toBlock: bigint
  logs: log[]
}

/** A log as `eth_getLogs` returns it (hex quantities), before validation. */
export interface RawLog {
  address?: unknown
  blockHash?: unknown
  blockNumber?: unknown
  data?: unknown
  logIndex?: unknown
  transactionHash?: unknown
  transactionIndex?: unknown
  topics?: unknown
  removed?: unknown
}

const LEGACY_PERMISSIONS_EVENT = parseAbiItem(
  'event SetAllowlistPermissions(address[] indexed accounts, uint256[] permissions)',
)
const LEGACY_PERMISSIONS_SELECTOR = toEventSelector(LEGACY_PERMISSIONS_EVENT)

const HEX = /^0x[0-9a-fA-F]*$/
const HASH = /^0x[0-9a-fA-F]{64}$/
const ADDRESS = /^0x[0-9a-fA-F]{40}$/

function isHex(value: unknown): value is Hex {
  return typeof value === 'string' && HEX.test(value)
}

function quantity(value: unknown): bigint | null {
  return typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value) ? BigInt(value) : null
}

function shortMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const e = error as { shortMessage?: unknown; details?: unknown; message?: unknown }
    if (typeof e.shortMessage === 'string') {
      return typeof e.details === 'string' && e.details ? `${e.shortMessage} ${e.details}` : e.shortMessage
    }
    if (typeof e.message === 'string') return e.message
  }
  return String(error)
}

/** Validates the position fields of a raw log; throws InvalidLogError naming what is wrong. */
function validateMeta(raw: RawLog): LogMeta {
  const blockNumber = quantity(raw.blockNumber)
  const logIndexBig = quantity(raw.logIndex)
  const transactionIndexBig = quantity(raw.transactionIndex)
  const position: LogPosition = {
    blockNumber,
    transactionHash: typeof raw.transactionHash === 'string' ? raw.transactionHash : null,
    logIndex: logIndexBig === null ? null : Number(logIndexBig),
  }
  const fail = (reason: string): never => {
    throw new InvalidLogError(reason, position)
  }
  if (raw.removed === true) fail('the node marks it removed (a reorg dropped its block)')
  if (blockNumber === null) fail('blockNumber is missing (a pending log?)')
  if (typeof raw.blockHash !== 'string' || !HASH.test(raw.blockHash))
    fail('blockHash is missing or malformed')
  if (typeof raw.transactionHash !== 'string' || !HASH.test(raw.transactionHash)) {
    fail('transactionHash is missing or malformed')
  }
  if (logIndexBig === null) fail('logIndex is missing')
  if (transactionIndexBig === null) fail('transactionIndex is missing')
  if (typeof raw.address !== 'string' || !ADDRESS.test(raw.address)) fail('address is missing or malformed')
  return {
    address: (raw.address as string).toLowerCase() as Address,
    blockNumber: blockNumber as bigint,
    blockHash: (raw.blockHash as string).toLowerCase() as Hash,
    transactionHash: (raw.transactionHash as string).toLowerCase() as Hash,
    transactionIndex: Number(transactionIndexBig),
    logIndex: Number(logIndexBig),
  }
}

interface EventEntry {
  event: AbiEvent
  indexed: AbiParameter[]
  nonIndexed: AbiParameter[]
}

/** topic0 of every event of an ABI, in ABI order. */
export function eventSelectors(abi: Abi): Hex[] {
  return abi.filter((item): item is AbiEvent => item.type === 'event').map((event) => toEventSelector(event))
}

function isStaticType(type: string): boolean {
  return !(type === 'string' || type === 'bytes' || type.startsWith('tuple') || type.endsWith(']'))
}

type StrictDecoding = { ok: true; args: unknown } | { ok: false; problem: string; cause?: unknown }

/**
 * Decodes topics and data against one event, strictly: each static indexed topic and the data must be exactly
 * the canonical ABI encoding of what they decode to (catches short or trailing data, dirty high bits of
 * addresses and small ints, stray offsets that a lenient decoder would accept; Solidity always emits the
 * canonical encoding). Dynamic indexed values (arrays, strings, bytes, structs) stay as their topic hash, as
 * viem returns them. `args` has viem's shape: an object by name, an array when an input is unnamed.
 */
function decodeStrict(entry: EventEntry, topics: Hex[], data: Hex): StrictDecoding {
  const indexed: unknown[] = []
  for (const [i, param] of entry.indexed.entries()) {
    const topic = topics[i + 1]
    if (topic === undefined || !HASH.test(topic))
      return { ok: false, problem: `topic ${i + 1} is not 32 bytes` }
    if (!isStaticType(param.type)) {
      indexed.push(topic)
      continue
    }
    try {
      const [value] = decodeAbiParameters([param], topic)
      if (encodeAbiParameters([param], [value]).toLowerCase() !== topic.toLowerCase()) {
        return { ok: false, problem: `topic ${i + 1} is not a canonical ${param.type}` }
      }
      indexed.push(value)
    } catch (error) {
      return { ok: false, problem: shortMessage(error), cause: error }
    }
  }
  let values: readonly unknown[] = []
  if (entry.nonIndexed.length > 0) {
    try {
      values = decodeAbiParameters(entry.nonIndexed, data)
    } catch (error) {
      return { ok: false, problem: shortMessage(error), cause: error }
    }
  }
  const canonical = entry.nonIndexed.length > 0 ? encodeAbiParameters(entry.nonIndexed, values) : '0x'
  if (canonical.toLowerCase() !== data.toLowerCase()) {
    const types = entry.nonIndexed.map((p) => p.type).join(',')
    return {
      ok: false,
      problem: `data is not the canonical encoding of (${types}): ${(data.length - 2) / 2} bytes, canonical ${(canonical.length - 2) / 2}`,
    }
  }
  const inputs = entry.event.inputs
  if (inputs.length === 0) return { ok: true, args: undefined }
  const unnamed = inputs.some((p) => !p.name)
  const list: unknown[] = []
  const named: Record<string, unknown> = {}
  let nextIndexed = 0
  let nextValue = 0
  for (const [position, param] of inputs.entries()) {
    const value = param.indexed ? indexed[nextIndexed++] : values[nextValue++]
    if (unnamed) list[position] = value
    else named[param.name as string] = value
  }
  return { ok: true, args: unnamed ? list : named }
}

/**
 * Builds a strict decoder for the events of an ABI. The decoder validates the log's position fields
 * (blockNumber, blockHash, transactionHash, logIndex, transactionIndex present; not `removed`), finds the
 * event by topic0, requires exactly its number of topics and the canonical encoding of its data, and returns
 * the typed record. Anything else throws InvalidLogError or LogDecodeError with block, tx and log index.
 * The one tolerated deviation is the legacy indexed `SetAllowlistPermissions` (see LegacyAllowlistPermissions).
 *
 * @example
 * const decode = createLogDecoder(riverAbi)
 * const log = decode(rawLog) // { eventName: 'Transfer', args: { from, to, value }, blockNumber: 123n, ... }
 */
export function createLogDecoder<const abi extends Abi>(abi: abi): (raw: RawLog) => DecodedLog<abi> {
  const events = new Map<string, EventEntry>()
  for (const item of abi) {
    if (item.type !== 'event') continue
    const indexed = item.inputs.filter((p) => p.indexed)
    const nonIndexed = item.inputs.filter((p) => !p.indexed)
    events.set(toEventSelector(item).toLowerCase(), { event: item, indexed, nonIndexed })
  }
  return (raw) => {
    const meta = validateMeta(raw)
    const position: LogPosition = {
      blockNumber: meta.blockNumber,
      transactionHash: meta.transactionHash,
      logIndex: meta.logIndex,
    }
    const topics = raw.topics
    if (!Array.isArray(topics) || topics.length === 0 || !topics.every(isHex)) {
      throw new InvalidLogError('topics are missing or malformed (an anonymous event?)', position)
    }
    if (!isHex(raw.data)) throw new InvalidLogError('data is missing or not hex', position)
    const data = raw.data
    const topic0 = (topics[0] as Hex).toLowerCase()
    const entry = events.get(topic0)
    if (!entry) {
      throw new LogDecodeError(`topic0 ${topic0} matches no event of the ABI`, position, {
        details: { address: meta.address },
      })
    }
    const eventName = entry.event.name
    if (
      topic0 === LEGACY_PERMISSIONS_SELECTOR &&
      eventName === 'SetAllowlistPermissions' &&
      entry.indexed.length === 0 &&
      topics.length === 2
    ) {
      return { ...meta, ...decodeLegacyPermissions(topics as Hex[], data, position) } as DecodedLog<abi>
    }
    const expectedTopics = 1 + entry.indexed.length
    if (topics.length !== expectedTopics) {
      throw new LogDecodeError(`expected ${expectedTopics} topics, got ${topics.length}`, position, {
        eventName,
      })
    }
    const decoded = decodeStrict(entry, topics as Hex[], data)
    if (!decoded.ok) throw new LogDecodeError(decoded.problem, position, { eventName, cause: decoded.cause })
    return { ...meta, eventName, args: decoded.args } as DecodedLog<abi>
  }
}

const LEGACY_PERMISSIONS_ENTRY: EventEntry = {
  event: LEGACY_PERMISSIONS_EVENT,
  indexed: [LEGACY_PERMISSIONS_EVENT.inputs[0]],
  nonIndexed: [LEGACY_PERMISSIONS_EVENT.inputs[1]],
}

function decodeLegacyPermissions(
  topics: Hex[],
  data: Hex,
  position: LogPosition,
): Omit<LegacyAllowlistPermissions, keyof LogMeta> {
  const decoded = decodeStrict(LEGACY_PERMISSIONS_ENTRY, topics, data)
  if (!decoded.ok) {
    throw new LogDecodeError(`legacy indexed form: ${decoded.problem}`, position, {
      eventName: 'SetAllowlistPermissions',
      cause: decoded.cause,
    })
  }
  const { permissions } = decoded.args as { permissions: readonly bigint[] }
  return {
    eventName: 'SetAllowlistPermissions',
    legacyIndexed: true,
    args: { accountsHash: (topics[1] as Hash).toLowerCase() as Hash, permissions },
  }
}

/**
 * Decodes one raw log strictly against an ABI (see createLogDecoder; prefer that for many logs).
 *
 * @example
 * decodeLog(allowlistAbi, rawLog).eventName // 'SetAllowlistPermissions'
 */
export function decodeLog<const abi extends Abi>(abi: abi, raw: RawLog): DecodedLog<abi> {
  return createLogDecoder(abi)(raw)
}

/** Orders logs by (blockNumber, logIndex). */
export function compareLogs(a: LogMeta, b: LogMeta): number {
  if (a.blockNumber !== b.blockNumber) return a.blockNumber < b.blockNumber ? -1 : 1
  return a.logIndex - b.logIndex
}

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
      const head = await withRetry(
        async () => BigInt(await client.request({ method: 'eth_blockNumber' }, { retryCount: 0 })),
        retryBase,
      )
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
        if (isRangeLimitError(error)) return 'shrink'
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
          if (size <= minRange) {
            throw new LogRangeError(`the node refused blocks ${from}..${to} even at the smallest range`, {
              details,
              cause: error,
            })
          }
          range = clamp(size / 2n)
          ceiling = range
          sinceShrink = 0
          logger?.warn({ ...details, new_range: range.toString() }, 'log block range shrunk')
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
        const grown = clamp(range * 2n)
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

/** Retry settings of the one-off reads below (defaults as withRetry's). */
export type ReadRetryOptions = Omit<RetryOptions, 'isRetryable'>

/**
 * Hashes of the given blocks (for reorg checks), fetched with retries, a few at a time.
 * Throws BlockNotFoundError for a block the node does not have.
 *
 * @example
 * const hashes = await getBlockHashes(client, [100n, 101n]) // Map { 100n => '0x…', 101n => '0x…' }
 */
export async function getBlockHashes(
  client: ChainClient,
  blockNumbers: readonly bigint[],
  options: ReadRetryOptions & { concurrency?: number } = {},
): Promise<Map<bigint, Hash>> {
  const { concurrency = 8, ...retry } = options
  const unique = [...new Set(blockNumbers)]
  const hashes = new Map<bigint, Hash>()
  let next = 0
  const worker = async () => {
    while (next < unique.length) {
      const blockNumber = unique[next++]!
      const block = await withRetry(
        () =>
          client.request(
            { method: 'eth_getBlockByNumber', params: [toHex(blockNumber), false] },
            { retryCount: 0 },
          ),
        retry,
      )
      if (!block) {
        throw new BlockNotFoundError(`block ${blockNumber} not found`, {
          details: { block_number: blockNumber.toString() },
        })
      }
      if (
        typeof block.hash !== 'string' ||
        !HASH.test(block.hash) ||
        quantity(block.number) !== blockNumber
      ) {
        throw new ChainRpcError(`the node returned a malformed block for ${blockNumber}`, {
          details: { block_number: blockNumber.toString() },
        })
      }
      hashes.set(blockNumber, block.hash.toLowerCase() as Hash)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, unique.length)) }, worker))
  return hashes
}

/**
 * The node's current block number (uncached), with retries.
 *
 * @example
 * const head = await getHeadBlockNumber(client)
 */
export async function getHeadBlockNumber(
  client: ChainClient,
  options: ReadRetryOptions = {},
): Promise<bigint> {
  return withRetry(
    async () => BigInt(await client.request({ method: 'eth_blockNumber' }, { retryCount: 0 })),
    options,
  )
}

/** Parameters of readAtBlock: a view call pinned to a historical block. */
export type ReadAtBlockParameters<
  abi extends Abi,
  functionName extends ContractFunctionName<abi, 'pure' | 'view'>,
  args extends ContractFunctionArgs<abi, 'pure' | 'view', functionName>,
> = Omit<ReadContractParameters<abi, functionName, args>, 'blockNumber' | 'blockTag'> & {
  blockNumber: bigint
}

/**
 * `readContract` at a given block (needs an archive node for old blocks), retried on transient errors; a
 * revert fails at once.
 *
 * @example
 * const supply = await readAtBlock(client, { address: river, abi: riverAbi, functionName: 'totalSupply', blockNumber: 123n })
 */
export async function readAtBlock<
  const abi extends Abi,
  functionName extends ContractFunctionName<abi, 'pure' | 'view'>,
  const args extends ContractFunctionArgs<abi, 'pure' | 'view', functionName>,
>(
  client: ChainClient,
  params: ReadAtBlockParameters<abi, functionName, args>,
  options: ReadRetryOptions = {},
): Promise<ReadContractReturnType<abi, functionName, args>> {
  return withRetry(
    () => client.readContract(params as unknown as ReadContractParameters<abi, functionName, args>),
    options,
  )
}
