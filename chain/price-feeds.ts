/**
 * ETH prices from Chainlink-shaped price feeds (AggregatorV3Interface), read at a report's block: the ETH/USD
 * and ETH/EUR answers stored beside every oracle report. ETH/EUR comes from a direct ETH / EUR feed or, where
 * none exists (mainnet), from the ETH / USD and EUR / USD rounds at the block (both returned: the division is
 * the engine's `derivedPrice`, done where the rows are made). A feed that is not configured, has no code yet,
 * reverts or answers a non-positive price is a missing price with its reason; an RPC or transport failure is
 * not (it is thrown, for the caller to retry).
 */
import {
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  type Hex,
  HttpRequestError,
  parseAbi,
  RpcError,
  RpcRequestError,
} from 'viem'
import type { Address } from '../common/address.ts'
import type { PriceFeeds } from './addresses.ts'
import { readAllAtBlock, type ViewCall, type ViewOutcome } from './blocks.ts'
import type { ChainClient } from './client.ts'
import { isTransientRpcError, withRetry } from './retry.ts'
import { shortMessage } from './rpc-values.ts'

/**
 * The subset of Chainlink's AggregatorV3Interface the service reads (the devnet's PriceFeed.sol declares the
 * same signatures; devnet/price-feed.test.ts checks it).
 */
export const aggregatorV3Abi = parseAbi([
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
  'function decimals() view returns (uint8)',
  'function description() view returns (string)',
])

/** The fiat currencies an ETH price is stored in. */
export const CURRENCIES = ['usd', 'eur'] as const
/** One of `CURRENCIES`. */
export type Currency = (typeof CURRENCIES)[number]

/**
 * The `description()` a feed of ETH in `currency` answers: Chainlink's pair name ("ETH / USD"). A feed that
 * describes itself otherwise (e.g. "EUR / USD", a fiat cross rate) is not an ETH price.
 *
 * @example
 * feedDescription('eur') // 'ETH / EUR'
 */
export function feedDescription(currency: Currency): string {
  return `ETH / ${currency.toUpperCase()}`
}

/** The `description()` of a EUR / USD feed (EUR's price in USD), the feed ETH/EUR is derived from. */
export const EUR_USD_DESCRIPTION = 'EUR / USD'

/** A feed's answer at a block: the latest round, its price (`answer` / 10^`decimals`) and when it was set. */
export interface FeedPrice {
  feed: Address
  round_id: bigint
  answer: bigint
  decimals: number
  /** the round's `updatedAt` */
  price_time: Date
}

/** No price at a block, and why (`feed` null when none is configured). */
export interface MissingPrice {
  feed: Address | null
  missing_reason: string
}

/** The price of one currency at a block: an answer, or a missing price with its reason. */
export type PriceRead = FeedPrice | MissingPrice

/**
 * ETH/EUR where no ETH / EUR feed is configured: the two rounds at the block it is derived from, ETH / USD
 * (`eth_usd`, the same read as the USD price) and EUR / USD (`eur_usd`); ETH/EUR = ETH/USD / EUR/USD.
 */
export interface DerivedRounds {
  eth_usd: FeedPrice
  eur_usd: FeedPrice
}

/** The ETH price in every currency at one block (EUR as an answer, the rounds to derive it from, or missing). */
export interface PriceReads {
  usd: PriceRead
  eur: PriceRead | DerivedRounds
}

/**
 * Whether a EUR read is the two rounds ETH/EUR is derived from.
 *
 * @example
 * if (isDerived(reads.eur)) derivedPrice(reads.eur.eth_usd, reads.eur.eur_usd)
 */
export function isDerived(read: PriceRead | DerivedRounds): read is DerivedRounds {
  return 'eur_usd' in read
}

/**
 * Whether a price read holds an answer.
 *
 * @example
 * if (hasPrice(reads.usd)) reads.usd.answer // 350012345678n
 */
export function hasPrice(read: PriceRead | DerivedRounds): read is FeedPrice {
  return 'answer' in read
}

const FUNCTIONS = ['latestRoundData', 'decimals', 'description'] as const

/** The feed read for a currency: its ETH feed, or for EUR without one the EUR / USD feed (`derived`). */
export interface FeedSource {
  currency: Currency
  feed: Address | undefined
  /** the `description()` the feed must answer ("ETH / USD", "ETH / EUR" or "EUR / USD") */
  description: string
  /** true: the EUR / USD feed ETH/EUR is derived from (with the ETH / USD feed) */
  derived: boolean
}

/**
 * The feed read for `currency` (a direct ETH / EUR feed wins: toContracts refuses both).
 *
 * @example
 * feedSourceOf(contractsFor('mainnet').priceFeeds, 'eur') // { currency: 'eur', feed: '0xb49f…', description: 'EUR / USD', derived: true }
 */
export function feedSourceOf(feeds: PriceFeeds | undefined, currency: Currency): FeedSource {
  return currency === 'eur' && !feeds?.eur && feeds?.eurUsd
    ? { currency, feed: feeds.eurUsd, description: EUR_USD_DESCRIPTION, derived: true }
    : { currency, feed: feeds?.[currency], description: feedDescription(currency), derived: false }
}

/** The feed of each currency, in `CURRENCIES` order. */
function sourcesOf(feeds: PriceFeeds | undefined): FeedSource[] {
  return CURRENCIES.map((currency) => feedSourceOf(feeds, currency))
}

/**
 * The view calls of `priceReadsFrom`, to put into a multicall at the block to read (three per configured
 * feed: latestRoundData, decimals, description, in `CURRENCIES` order; for EUR, the EUR / USD feed when no
 * ETH / EUR feed is configured).
 *
 * @example
 * const outcomes = await readAllAtBlock(client, [...riverCalls, ...priceFeedCalls(feeds)], block)
 */
export function priceFeedCalls(feeds: PriceFeeds | undefined): ViewCall[] {
  return sourcesOf(feeds).flatMap(({ feed }) =>
    feed ? FUNCTIONS.map((functionName) => ({ address: feed, abi: aggregatorV3Abi, functionName })) : [],
  )
}

/** Why a failed call is a missing price, or undefined when it is an RPC failure (to be thrown). */
function failureKind(error: Error): 'revert' | 'no-data' | 'undecodable' | undefined {
  if (isTransientRpcError(error)) return undefined
  if (!(error instanceof BaseError)) return undefined
  // a failed request (the node's error, even one viem reads as a revert, e.g. -32603): thrown, never a price
  if (
    error.walk((e) => e instanceof RpcError || e instanceof RpcRequestError || e instanceof HttpRequestError)
  )
    return undefined
  if (error.walk((e) => e instanceof ContractFunctionRevertedError)) return 'revert'
  if (error.walk((e) => e instanceof ContractFunctionZeroDataError)) return 'no-data'
  if (
    error.walk((e) =>
      /AbiDecoding|Decod|PositionOutOfBounds|SizeOverflow|InvalidBytesBoolean/.test((e as Error).name),
    )
  )
    return 'undecodable'
  return undefined
}

/** The revert reason of a failed call, on one line. */
function revertText(error: Error): string {
  const revert =
    error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null
  if (revert instanceof ContractFunctionRevertedError) {
    if (revert.reason) return revert.reason
    if (revert.data?.errorName)
      return `${revert.data.errorName}(${(revert.data.args ?? []).map(String).join(', ')})`
    if (revert.raw && revert.raw !== '0x') return `revert data ${revert.raw.slice(0, 10)}`
    return 'no reason given'
  }
  return shortMessage(error).replace(/\s+/g, ' ')
}

/**
 * The prices at `blockNumber` from the outcomes of `priceFeedCalls(feeds)` (in its order) read at that block.
 * Missing, with the reason: no feed configured for the currency, a feed without code at the block (its address
 * is checked with one `eth_getCode`, only when a call answered no data), a revert, an answer that does not
 * decode, a description other than the pair's ("ETH / USD", "ETH / EUR", "EUR / USD"), a non-positive answer.
 * With a EUR / USD feed instead of an ETH / EUR one, EUR is the two rounds (`DerivedRounds`), or missing when
 * either is, its reason naming which ("the EUR/USD price is missing (ETH/EUR is derived from ETH/USD and
 * EUR/USD): the feed reverted at block …"). An RPC failure in the outcomes is thrown.
 *
 * @example
 * const reads = await priceReadsFrom(client, 1, feeds, outcomes, 21_000_000n)
 * reads.usd // { feed: '0x5f4e…', round_id: 1107…n, answer: 350012345678n, decimals: 8, price_time: 2024-10-… }
 * reads.eur // { eth_usd: reads.usd, eur_usd: { feed: '0xb49f…', round_id: …, answer: 108700000n, decimals: 8, … } }
 */
export async function priceReadsFrom(
  client: ChainClient,
  chainId: number,
  feeds: PriceFeeds | undefined,
  outcomes: readonly ViewOutcome[],
  blockNumber: bigint,
): Promise<PriceReads> {
  const read = {} as Record<Currency, PriceRead>
  let position = 0
  for (const { currency, feed, description } of sourcesOf(feeds)) {
    const pair = description.replaceAll(' ', '')
    if (!feed) {
      read[currency] = { feed: null, missing_reason: `no ${pair} feed is configured for chain ${chainId}` }
      continue
    }
    const mine = outcomes.slice(position, position + FUNCTIONS.length)
    position += FUNCTIONS.length
    if (mine.length !== FUNCTIONS.length) throw new Error(`priceReadsFrom: no outcomes for the ${pair} feed`)
    read[currency] = await priceOf(
      client,
      description,
      feed,
      mine as [ViewOutcome, ViewOutcome, ViewOutcome],
      blockNumber,
    )
  }
  if (!sourcesOf(feeds).some((source) => source.derived)) return read
  return { usd: read.usd, eur: derivedRead(read.usd, read.eur) }
}

/** ETH/EUR from the ETH / USD and EUR / USD reads: both rounds, or missing naming the one that is. */
function derivedRead(ethUsd: PriceRead, eurUsd: PriceRead): DerivedRounds | MissingPrice {
  const how = '(ETH/EUR is derived from ETH/USD and EUR/USD)'
  if (!hasPrice(ethUsd))
    return {
      feed: ethUsd.feed,
      missing_reason: `the ETH/USD price is missing ${how}: ${ethUsd.missing_reason}`,
    }
  if (!hasPrice(eurUsd))
    return {
      feed: eurUsd.feed,
      missing_reason: `the EUR/USD price is missing ${how}: ${eurUsd.missing_reason}`,
    }
  return { eth_usd: ethUsd, eur_usd: eurUsd }
}

async function priceOf(
  client: ChainClient,
  expected: string,
  feed: Address,
  [round, decimals, description]: [ViewOutcome, ViewOutcome, ViewOutcome],
  blockNumber: bigint,
): Promise<PriceRead> {
  const missing = (reason: string): MissingPrice => ({ feed, missing_reason: reason })
  /** The missing price of a failed call, or undefined when it answered; an RPC failure is thrown. */
  const failed = async (outcome: ViewOutcome): Promise<MissingPrice | undefined> => {
    if (outcome.status === 'success') return undefined
    const kind = failureKind(outcome.error)
    if (!kind) throw outcome.error
    if (kind === 'revert')
      return missing(`the feed reverted at block ${blockNumber}: ${revertText(outcome.error)}`)
    if (kind === 'no-data') {
      const code: Hex | undefined = await withRetry(() => client.getCode({ address: feed, blockNumber }))
      if (!code || code === '0x')
        return missing(`the feed has no code at block ${blockNumber} (deployed later)`)
      return missing(`the feed answered no data at block ${blockNumber} (not an AggregatorV3 feed)`)
    }
    return missing(`the feed answered data that does not decode as AggregatorV3 at block ${blockNumber}`)
  }
  // what the feed is first (a feed of another pair is wrong whatever it answers), then its latest round
  for (const outcome of [description, decimals]) {
    const reason = await failed(outcome)
    if (reason) return reason
  }
  const said = (description as { result: unknown }).result as string
  if (said.trim() !== expected) {
    return missing(`the feed describes itself as "${said}", not "${expected}" (block ${blockNumber})`)
  }
  const noRound = await failed(round)
  if (noRound) return noRound
  const [roundId, answer, , updatedAt] = (round as { result: unknown }).result as readonly [
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
  ]
  if (answer <= 0n)
    return missing(`the feed answered a non-positive price (${answer}) at block ${blockNumber}`)
  return {
    feed,
    round_id: roundId,
    answer,
    decimals: Number((decimals as { result: unknown }).result),
    price_time: new Date(Number(updatedAt) * 1000),
  }
}

/**
 * The ETH/USD and ETH/EUR prices (or the rounds ETH/EUR is derived from) of a chain's feeds at `blockNumber`:
 * one multicall (needs an archive node for
 * old blocks), then `priceReadsFrom`. A feed not configured, without code, reverting or answering a
 * non-positive price is a missing price with its reason; an RPC failure (after retries) is thrown.
 *
 * @example
 * const prices = await readPriceFeeds(client, 1, contractsFor('mainnet').priceFeeds, 21_000_000n)
 * if (hasPrice(prices.usd)) console.log(prices.usd.answer, prices.usd.decimals)
 */
export async function readPriceFeeds(
  client: ChainClient,
  chainId: number,
  feeds: PriceFeeds | undefined,
  blockNumber: bigint,
): Promise<PriceReads> {
  const calls = priceFeedCalls(feeds)
  const outcomes = calls.length > 0 ? await readAllAtBlock(client, calls, blockNumber) : []
  return priceReadsFrom(client, chainId, feeds, outcomes, blockNumber)
}
