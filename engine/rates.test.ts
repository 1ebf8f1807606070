import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { decFloorToBigint, toDec } from './decimal.ts'
import { InvalidInputError } from './errors.ts'
import {
  computeFeeMint,
  conversionRate,
  feeRateOfBps,
  feeSharesToMint,
  sharesFromUnderlying,
  underlyingFromShares,
} from './rates.ts'

const E = 10n ** 18n
const arbMint = fc
  .record({
    supplyBefore: fc.bigInt({ min: 1n, max: 2n ** 90n }),
    rateMicro: fc.bigInt({ min: 500_000n, max: 2_000_000n }),
    rewardPpm: fc.bigInt({ min: 0n, max: 100_000n }),
    dust: fc.bigInt({ min: 0n, max: 10n ** 6n }),
    feeBps: fc.integer({ min: 0, max: 10_000 }),
  })
  .map(({ supplyBefore, rateMicro, rewardPpm, dust, feeBps }) => {
    const before = (supplyBefore * rateMicro) / 1_000_000n + dust
    const rewards = (before * rewardPpm) / 1_000_000n
    return { rewards, supplyBefore, underlyingAfter: before + rewards, feeBps }
  })

describe('computeFeeMint', () => {
  test('behavior: the hand example: 1 ETH of rewards on 1000 ETH at 10 %', () => {
    const mint = computeFeeMint({
      rewards: E,
      supplyBefore: 1000n * E,
      underlyingAfter: 1001n * E,
      feeBps: 1000,
    })
    // floor(1e18 x 1e21 x 1000 / (1.001e21 x 10000 - 1e18 x 1000)) = floor(1e42 / 1.0009e25)
    expect(mint.shares_minted).toBe(99_910_080_927_165_551n)
    expect(mint.fee_eth).toBe(100_000_000_000_000_000n)
    expect(mint.collector_eth).toBe(99_999_999_999_999_999n)
    expect(mint.rate_pre_fee).toBe('1.001')
    expect(mint.rate_post_fee).toBe('1.0009')
  })

  test('behavior: no rewards, no fee or a zero denominator mint nothing', () => {
    expect(feeSharesToMint({ rewards: 0n, supplyBefore: E, underlyingAfter: E, feeBps: 1000 })).toBe(0n)
    expect(feeSharesToMint({ rewards: E, supplyBefore: E, underlyingAfter: 2n * E, feeBps: 0 })).toBe(0n)
    expect(feeSharesToMint({ rewards: E, supplyBefore: E, underlyingAfter: E, feeBps: 10_000 })).toBe(0n)
    expect(() => feeSharesToMint({ rewards: 2n, supplyBefore: E, underlyingAfter: 1n, feeBps: 1 })).toThrow(
      InvalidInputError,
    )
    expect(() =>
      feeSharesToMint({ rewards: 1n, supplyBefore: E, underlyingAfter: E, feeBps: 10_001 }),
    ).toThrow(InvalidInputError)
  })

  test.prop([arbMint], { numRuns: runs(500) })(
    'property: the collector holds exactly f/10000 x r, to the on-chain floor',
    ({ rewards, supplyBefore, underlyingAfter, feeBps }) => {
      const mint = computeFeeMint({ rewards, supplyBefore, underlyingAfter, feeBps })
      const m = mint.shares_minted
      const f = BigInt(feeBps)
      const U = underlyingAfter
      // exact: m x U / (S0 + m) <= r f / 10000 < (m + 1) x U / (S0 + m + 1) (m is the largest such count)
      expect(m * U * 10_000n <= rewards * f * (supplyBefore + m)).toBe(true)
      if (underlyingAfter * 10_000n > rewards * f) {
        expect((m + 1n) * U * 10_000n > rewards * f * (supplyBefore + m + 1n)).toBe(true)
      }
      // so the collector's on-chain value never exceeds the fee, and misses it by less than one share's value
      expect(mint.collector_eth <= mint.fee_eth).toBe(true)
      expect(mint.fee_eth - mint.collector_eth <= U / (supplyBefore + m) + 1n).toBe(true)
    },
  )

  test.prop([arbMint], { numRuns: runs(300) })(
    'property: the integer formula equals the decimal.js reference',
    ({ rewards, supplyBefore, underlyingAfter, feeBps }) => {
      const den = toDec(underlyingAfter).mul(10_000).minus(toDec(rewards).mul(feeBps))
      const expected = den.isZero()
        ? 0n
        : decFloorToBigint(toDec(rewards).mul(toDec(supplyBefore)).mul(feeBps).div(den))
      expect(feeSharesToMint({ rewards, supplyBefore, underlyingAfter, feeBps })).toBe(expected)
    },
  )
})

describe('conversionRate', () => {
  test('behavior: U / S at 18 digits rounded down; floor conversions as on chain', () => {
    expect(conversionRate(2n, 3n)).toBe('0.666666666666666666')
    expect(conversionRate(1001n * E, 1000n * E)).toBe('1.001')
    expect(() => conversionRate(1n, 0n)).toThrow(InvalidInputError)
    expect(underlyingFromShares(10n, 1001n, 1000n)).toBe(10n)
    expect(underlyingFromShares(10n, 1n, 0n)).toBe(0n)
    expect(sharesFromUnderlying(1001n, 1001n, 1000n)).toBe(1000n)
    expect(sharesFromUnderlying(1n, 0n, 1n)).toBe(0n)
    expect(feeRateOfBps(1000)).toBe('0.1')
    expect(feeRateOfBps(1500n)).toBe('0.15')
    expect(feeRateOfBps(1)).toBe('0.0001')
  })
})
