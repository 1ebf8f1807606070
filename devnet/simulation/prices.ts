/**
 * The devnet's prices: a seeded random walk of ETH / USD and of EUR / USD (pure bigint, 8 decimals as
 * Chainlink's fiat feeds), set on the two PriceFeeds in a block of their own a minute before each day's oracle
 * report, so the report's block reads the day's prices. There is no ETH / EUR feed, as on mainnet: the service
 * derives ETH / EUR from the two (chain/price-feeds.ts).
 */
import { encodeFunctionData } from 'viem'
import { devnetPriceFeedAbi } from '../abi.ts'
import type { TxRequest } from '../blocks.ts'
import type { Rng } from '../rng.ts'
import { mine } from './ledger.ts'
import type { SimulationContext } from './state.ts'
import { call, GAS } from './transactions.ts'

/** Decimals of the devnet's price answers (as Chainlink's ETH / USD and fiat feeds). */
export const PRICE_DECIMALS = 8
const ONE = 10n ** BigInt(PRICE_DECIMALS)

/** One day's prices as set on the feeds (answers with `PRICE_DECIMALS` decimals): ETH / USD and EUR / USD. */
export interface DayPrices {
  usd: bigint
  eurUsd: bigint
}

/** The walk's state: ETH / USD (an answer), and USD per EUR in basis points. */
export interface PriceWalk {
  usd: bigint
  usdPerEurBps: bigint
}

/** Where the walk starts: 3,000 USD per ETH, 1.0870 USD per EUR. */
export const PRICE_WALK_START: PriceWalk = { usd: 3_000n * ONE, usdPerEurBps: 10_870n }

/**
 * The next day of the walk: ETH / USD moves by a whole number of basis points drawn uniformly in [-400, 400]
 * (rounded down to an integer answer), EUR / USD by one in [-15, 15] bps kept within [10,400, 11,400]. The two
 * draws, in this order, are the generator's only ones: the ETH / USD path of a seed is the one it had when the
 * devnet still set an ETH / EUR feed (whose rate drew the second number). Exact and deterministic for a given
 * generator.
 *
 * @example
 * const { walk, prices } = nextPrices(PRICE_WALK_START, createRng(1).fork('prices'))
 */
export function nextPrices(walk: PriceWalk, rng: Rng): { walk: PriceWalk; prices: DayPrices } {
  const usdStep = BigInt(rng.int(801) - 400)
  const rateStep = BigInt(rng.int(31) - 15)
  // rounding: ROUND_DOWN to an integer answer (the walk never leaves the positive prices: at most -4% a day)
  const usd = (walk.usd * (10_000n + usdStep)) / 10_000n
  let usdPerEurBps = walk.usdPerEurBps + rateStep
  if (usdPerEurBps < 10_400n) usdPerEurBps = 10_400n
  if (usdPerEurBps > 11_400n) usdPerEurBps = 11_400n
  const next = { usd, usdPerEurBps }
  // bps to an 8-decimal answer: exact (x 10^4)
  return { walk: next, prices: { usd, eurUsd: usdPerEurBps * (ONE / 10_000n) } }
}

/** The owner's (the admin's) `updateAnswer` transactions of one day's prices, ETH / USD first. */
export function priceTxs(ctx: SimulationContext, prices: DayPrices, date: string): TxRequest[] {
  const { contracts, roles } = ctx.deployment
  const update = (answer: bigint) =>
    encodeFunctionData({ abi: devnetPriceFeedAbi, functionName: 'updateAnswer', args: [answer] })
  return [
    call(roles.admin, contracts.usdPriceFeed, update(prices.usd), GAS.admin, `ETH / USD price of ${date}`),
    call(roles.admin, contracts.eurPriceFeed, update(prices.eurUsd), GAS.admin, `EUR / USD price of ${date}`),
  ]
}

/**
 * Draws the day's prices and, from `ctx.pricesFromDay` on, mines them in a block 60 s before the report (or
 * right after the latest block, if that is later). Returns the prices set, or undefined on a day before
 * `pricesFromDay` (the feeds keep their last round, or none: their reads revert "No data present").
 */
export async function minePrices(
  ctx: SimulationContext,
  day: number,
  date: string,
  reportTimestamp: bigint,
): Promise<DayPrices | undefined> {
  // drawn every day, set or not: the path of a day does not depend on pricesFromDay
  const { walk, prices } = nextPrices(ctx.priceWalk, ctx.priceRng)
  ctx.priceWalk = walk
  if (day < ctx.pricesFromDay) return undefined
  const earliest = ctx.builder.lastTimestamp() + 1n
  const at = reportTimestamp - 60n > earliest ? reportTimestamp - 60n : earliest
  if (at >= reportTimestamp) throw new Error(`no room for the prices of ${date} before its report`)
  await mine(ctx, priceTxs(ctx, prices, date), at)
  return prices
}
