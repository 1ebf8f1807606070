/**
 * Strict decoding of raw logs to typed records that carry their block, tx and log index: each log must be the
 * canonical ABI encoding of one event of the ABI, with its position fields present. The one tolerated
 * deviation is the legacy indexed `SetAllowlistPermissions` of the first mainnet Allowlist.
 */
import {
  type Abi,
  type AbiEvent,
  type AbiParameter,
  type Address,
  type DecodeEventLogReturnType,
  decodeAbiParameters,
  encodeAbiParameters,
  type Hash,
  type Hex,
  parseAbiItem,
  toEventSelector,
} from 'viem'
import { decodedAddress, type Address as StoredAddress } from '../common/address.ts'
import { type WordDecoder, wordDecoder } from './abi-words.ts'
import { InvalidLogError, LogDecodeError, type LogPosition } from './errors.ts'
import { ADDRESS, HASH, isHex, quantity, shortMessage } from './rpc-values.ts'

/** Where a decoded log sits on chain. `address` is lower case (the one stored form). */
export interface LogMeta {
  address: StoredAddress
  blockNumber: bigint
  blockHash: Hash
  transactionHash: Hash
  transactionIndex: number
  logIndex: number
  /**
   * The block's time (seconds) when the node gives it with the log (`blockTimestamp`, execution-apis#639:
   * anvil, Besu and later clients), which spares a block header read; absent otherwise (and when the node
   * says 0, which no real block has).
   */
  blockTimestamp?: bigint
}

/** viem's decoded value with every address (alone or in an array) in the stored form, `common/address.ts`. */
type StoredAddresses<value> = value extends Address
  ? StoredAddress
  : value extends readonly Address[]
    ? readonly StoredAddress[]
    : value

/** An event's args with `StoredAddresses` applied to each field. */
type StoredArgs<args> = args extends readonly unknown[]
  ? { readonly [i in keyof args]: StoredAddresses<args[i]> }
  : args extends Record<string, unknown>
    ? { [key in keyof args]: StoredAddresses<args[key]> }
    : args

/** viem's decoded event union with its args in stored form (below). */
type WithStoredArgs<event> = event extends { args: infer args }
  ? Omit<event, 'args'> & { args: StoredArgs<args> }
  : event

/**
 * The event union of an ABI as viem decodes it (bigint for uint/int), except that every `address` and
 * `address[]` argument is an `Address` of common/address.ts: lower case, normalized once here where chain
 * data enters, so no later layer lower-cases it again.
 */
export type DecodedEvent<abi extends Abi> = Abi extends abi
  ? { eventName: string; args: Record<string, unknown> | readonly unknown[] | undefined }
  : WithStoredArgs<DecodeEventLogReturnType<abi, undefined, Hex[], Hex, true>>

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
  blockTimestamp?: unknown
}

const LEGACY_PERMISSIONS_EVENT = parseAbiItem(
  'event SetAllowlistPermissions(address[] indexed accounts, uint256[] permissions)',
)
const LEGACY_PERMISSIONS_SELECTOR = toEventSelector(LEGACY_PERMISSIONS_EVENT)

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
  const blockTimestamp = raw.blockTimestamp == null ? undefined : quantity(raw.blockTimestamp)
  if (blockTimestamp === null) fail('blockTimestamp is malformed')
  const meta: LogMeta = {
    address: decodedAddress(raw.address as Address),
    blockNumber: blockNumber as bigint,
    blockHash: (raw.blockHash as string).toLowerCase() as Hash,
    transactionHash: (raw.transactionHash as string).toLowerCase() as Hash,
    transactionIndex: Number(transactionIndexBig),
    logIndex: Number(logIndexBig),
  }
  if (blockTimestamp) meta.blockTimestamp = blockTimestamp
  return meta
}

interface EventEntry {
  event: AbiEvent
  indexed: AbiParameter[]
  nonIndexed: AbiParameter[]
  /**
   * The fast path's word decoders (`abi-words.ts`): one per indexed input (null for a dynamic one, which stays
   * its topic) and one per data word; undefined when an input's type has none (the generic path decodes it).
   */
  fast: { indexed: (WordDecoder | null)[]; data: WordDecoder[] } | undefined
}

/** An event's entry, with its fast path when every input's type has one. */
function eventEntry(event: AbiEvent, indexed: AbiParameter[], nonIndexed: AbiParameter[]): EventEntry {
  const fastIndexed: (WordDecoder | null)[] = []
  for (const param of indexed) {
    const decoder = isStaticType(param.type) ? wordDecoder(param) : null
    if (decoder === undefined) return { event, indexed, nonIndexed, fast: undefined }
    fastIndexed.push(decoder)
  }
  const fastData: WordDecoder[] = []
  for (const param of nonIndexed) {
    const decoder = isStaticType(param.type) ? wordDecoder(param) : undefined
    if (decoder === undefined) return { event, indexed, nonIndexed, fast: undefined }
    fastData.push(decoder)
  }
  return { event, indexed, nonIndexed, fast: { indexed: fastIndexed, data: fastData } }
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
  const fast = entry.fast && decodeFast(entry, entry.fast, topics, data)
  if (fast) return fast
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
  return { ok: true, args: argsOf(entry, indexed, values) }
}

/**
 * `decodeStrict` for an event whose every input has a word decoder (`abi-words.ts`): each static topic and data
 * word decoded where it lies, no re-encoding. Undefined when anything is not canonical (or the data is not
 * exactly one word per input): the generic path then decodes the log and names what is wrong, so both paths
 * accept the same logs and answer the same args.
 */
function decodeFast(
  entry: EventEntry,
  fast: NonNullable<EventEntry['fast']>,
  topics: Hex[],
  data: Hex,
): StrictDecoding | undefined {
  // topics and data are hex (checked by the decoder before decodeStrict)
  const indexed: unknown[] = []
  for (let i = 0; i < fast.indexed.length; i++) {
    const topic = topics[i + 1]
    if (topic === undefined || topic.length !== 66) return undefined
    const decoder = fast.indexed[i]
    const value = decoder ? decoder(topic.slice(2).toLowerCase()) : topic
    if (value === undefined) return undefined
    indexed.push(value)
  }
  if (data.length !== 2 + 64 * fast.data.length) return undefined
  const words = data.toLowerCase()
  const values: unknown[] = []
  for (let i = 0; i < fast.data.length; i++) {
    const value = (fast.data[i] as WordDecoder)(words.slice(2 + 64 * i, 66 + 64 * i))
    if (value === undefined) return undefined
    values.push(value)
  }
  return { ok: true, args: argsOf(entry, indexed, values) }
}

/** viem's args shape from decoded values in input order: an object by name, an array when an input is unnamed. */
function argsOf(entry: EventEntry, indexed: readonly unknown[], values: readonly unknown[]): unknown {
  const inputs = entry.event.inputs
  if (inputs.length === 0) return undefined
  const unnamed = inputs.some((p) => !p.name)
  const list: unknown[] = []
  const named: Record<string, unknown> = {}
  let nextIndexed = 0
  let nextValue = 0
  for (const [position, param] of inputs.entries()) {
    const value = storedForm(param, param.indexed ? indexed[nextIndexed++] : values[nextValue++])
    if (unnamed) list[position] = value
    else named[param.name as string] = value
  }
  return unnamed ? list : named
}

/** A decoded value as the service stores it: `address` and `address[]` in lower case (`decodedAddress`). */
function storedForm(param: AbiParameter & { indexed?: boolean | undefined }, value: unknown): unknown {
  // an indexed dynamic value is only its topic (a hash): nothing to normalize
  if (param.indexed && !isStaticType(param.type)) return value
  if (param.type === 'address') return decodedAddress(value as Address)
  if (param.type === 'address[]') return (value as Address[]).map(decodedAddress)
  return value
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
    events.set(toEventSelector(item).toLowerCase(), eventEntry(item, indexed, nonIndexed))
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

const LEGACY_PERMISSIONS_ENTRY: EventEntry = eventEntry(
  LEGACY_PERMISSIONS_EVENT,
  [LEGACY_PERMISSIONS_EVENT.inputs[0]],
  [LEGACY_PERMISSIONS_EVENT.inputs[1]],
)

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
