import { describe, expect, test } from 'vitest'
import { createRng } from '../rng.ts'
import { nextPrices, PRICE_DECIMALS, PRICE_WALK_START, type PriceWalk } from './prices.ts'

/** The first `days` prices of a seed's walk, and the generator after them. */
function walk(seed: number, days: number) {
  const rng = createRng(seed).fork('prices')
  let state: PriceWalk = PRICE_WALK_START
  const usd: bigint[] = []
  const eurUsd: bigint[] = []
  for (let day = 0; day < days; day++) {
    const next = nextPrices(state, rng)
    state = next.walk
    usd.push(next.prices.usd)
    eurUsd.push(next.prices.eurUsd)
  }
  return { usd, eurUsd, rng }
}

describe('nextPrices', () => {
  test('behavior: the ETH / USD path of a seed is the one the walk drew when the devnet set an ETH / EUR feed', () => {
    // recorded from the walk before EUR / USD replaced ETH / EUR (seed 1, the devnet's 'prices' fork)
    expect(walk(1, 10).usd).toEqual([
      306360000000n,
      301488876000n,
      301398429337n,
      295400600593n,
      287808805157n,
      293478638618n,
      293273203570n,
      302511309482n,
      303055829839n,
      305783332307n,
    ])
  })

  test('behavior: EUR / USD is an 8-decimal answer near 1.087 moving by at most 15 bps a day within [1.04, 1.14]', () => {
    expect(PRICE_DECIMALS).toBe(8)
    const { eurUsd } = walk(77, 400)
    expect(eurUsd.slice(0, 3)).toEqual([108640000n, 108670000n, 108690000n])
    let previous = PRICE_WALK_START.usdPerEurBps * 10_000n
    for (const answer of eurUsd) {
      expect(answer % 10_000n).toBe(0n)
      expect(answer).toBeGreaterThanOrEqual(104_000_000n)
      expect(answer).toBeLessThanOrEqual(114_000_000n)
      const step = answer - previous
      expect(step <= 150_000n && step >= -150_000n).toBe(true)
      previous = answer
    }
    expect(new Set(eurUsd).size).toBeGreaterThan(20)
  })

  test('behavior: a day draws exactly two numbers from its generator (the other streams of the seed are untouched)', () => {
    const { rng } = walk(5, 7)
    const fresh = createRng(5).fork('prices')
    for (let i = 0; i < 14; i++) fresh.next()
    expect(rng.next()).toBe(fresh.next())
  })
})
