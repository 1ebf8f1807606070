/**
 * The devnet's ETH prices: a seeded random walk of ETH / USD and of the EUR per USD rate (pure bigint, 8
 * decimals as Chainlink's fiat feeds), set on the two PriceFeeds in a block of their own a minute before each
 * day's oracle report, so the report's block reads the day's price.
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

/** One day's ETH prices as set on the feeds (answers with `PRICE_DECIMALS` decimals). */
export interface DayPrices {
  usd: bigint
  eur: bigint
}

/** The walk's state: ETH / USD, and EUR per USD in basis points. */
export interface PriceWalk {
  usd: bigint
  eurPerUsdBps: bigint
}

/** Where the walk starts: 3,000 USD per ETH, 0.92 EUR per USD. */
export const PRICE_WALK_START: PriceWalk = { usd: 3_000n * ONE, eurPerUsdBps: 9_200n }

/**
 * The next day of the walk: ETH / USD moves by a whole number of basis points drawn uniformly in [-400, 400]
 * (rounded down to an integer answer), EUR per USD by one in [-15, 15] bps kept within [8,800, 9,600]; ETH / EUR
 * is ETH / USD x EUR per USD, rounded down. Exact and deterministic for a given generator.
 *
 * @example
 * const { walk, prices } = nextPrices(PRICE_WALK_START, createRng(1).fork('prices'))
 */
export function nextPrices(walk: PriceWalk, rng: Rng): { walk: PriceWalk; prices: DayPrices } {
  const usdStep = BigInt(rng.int(801) - 400)
  const rateStep = BigInt(rng.int(31) - 15)
  // rounding: ROUND_DOWN to an integer answer (the walk never leaves the positive prices: at most -4% a day)
  const usd = (walk.usd * (10_000n + usdStep)) / 10_000n
  let eurPerUsdBps = walk.eurPerUsdBps + rateStep
  if (eurPerUsdBps < 8_800n) eurPerUsdBps = 8_800n
  if (eurPerUsdBps > 9_600n) eurPerUsdBps = 9_600n
  const next = { usd, eurPerUsdBps }
  return { walk: next, prices: { usd, eur: (usd * eurPerUsdBps) / 10_000n } }
}

/** The owner's (the admin's) `updateAnswer` transactions of one day's prices, ETH / USD first. */
export function priceTxs(ctx: SimulationContext, prices: DayPrices, date: string): TxRequest[] {
  const { contracts, roles } = ctx.deployment
  const update = (answer: bigint) =>
    encodeFunctionData({ abi: devnetPriceFeedAbi, functionName: 'updateAnswer', args: [answer] })
  return [
    call(roles.admin, contracts.usdPriceFeed, update(prices.usd), GAS.admin, `ETH / USD price of ${date}`),
    call(roles.admin, contracts.eurPriceFeed, update(prices.eur), GAS.admin, `ETH / EUR price of ${date}`),
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
