import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { DERIVED_PRICE_DECIMALS, derivedPrice } from './cross-price.ts'
import { InvalidInputError } from './errors.ts'

const answer = fc.oneof(fc.bigInt({ min: 1n, max: 10n ** 14n }), fc.bigInt({ min: 1n, max: 2n ** 255n - 1n }))
const decimals = fc.integer({ min: 0, max: 30 })
const feed = fc.record({ answer, decimals })

describe('derivedPrice', () => {
  test('behavior: ETH / EUR is ETH / USD over EUR / USD at 18 decimals, exact', () => {
    expect(
      derivedPrice({ answer: 300_000_000_000n, decimals: 8 }, { answer: 108_700_000n, decimals: 8 }),
    ).toEqual({ answer: 2_759_889_604_415_823_367_065n, decimals: 18 })
    expect(derivedPrice({ answer: 3n, decimals: 0 }, { answer: 2n, decimals: 0 })).toEqual({
      answer: 1_500_000_000_000_000_000n,
      decimals: DERIVED_PRICE_DECIMALS,
    })
    // decimals that differ: 3,000.00 (2 decimals) over 1.25 (8 decimals) = 2,400
    expect(
      derivedPrice({ answer: 300_000n, decimals: 2 }, { answer: 125_000_000n, decimals: 8 }).answer,
    ).toBe(2_400n * 10n ** 18n)
    // more decimals on ETH / USD than 18 + the quote's: still integers (the power moves to the denominator)
    expect(derivedPrice({ answer: 5n * 10n ** 30n, decimals: 30 }, { answer: 2n, decimals: 0 }).answer).toBe(
      25n * 10n ** 17n,
    )
  })

  test('behavior: the one rounding is half-even at the 18th place', () => {
    // 1 / 3 x 10^18 = 333…333.33: down; 2 / 3 x 10^18 = 666…666.67: up
    expect(derivedPrice({ answer: 1n, decimals: 0 }, { answer: 3n, decimals: 0 }).answer).toBe(
      333_333_333_333_333_333n,
    )
    expect(derivedPrice({ answer: 2n, decimals: 0 }, { answer: 3n, decimals: 0 }).answer).toBe(
      666_666_666_666_666_667n,
    )
    // ties: 10^-18 x (k + 1/2), as 1 (at 18 decimals) / 2 = 0.5 unit -> 0 (even); 3 / 2 = 1.5 -> 2 (even)
    expect(derivedPrice({ answer: 1n, decimals: 18 }, { answer: 2n, decimals: 0 }).answer).toBe(0n)
    expect(derivedPrice({ answer: 3n, decimals: 18 }, { answer: 2n, decimals: 0 }).answer).toBe(2n)
    expect(derivedPrice({ answer: 5n, decimals: 18 }, { answer: 2n, decimals: 0 }).answer).toBe(2n)
    expect(derivedPrice({ answer: 7n, decimals: 18 }, { answer: 2n, decimals: 0 }).answer).toBe(4n)
  })

  test('behavior: a non-positive answer or decimals out of range is refused, never divided', () => {
    const ok = { answer: 100_000_000n, decimals: 8 }
    expect(() => derivedPrice(ok, { answer: 0n, decimals: 8 })).toThrow(InvalidInputError)
    expect(() => derivedPrice({ answer: -1n, decimals: 8 }, ok)).toThrow(/ETH \/ USD answer must be positive/)
    expect(() => derivedPrice(ok, { answer: 1n, decimals: 78 })).toThrow(/decimals must be an integer/)
    expect(() => derivedPrice({ answer: 1n, decimals: 1.5 }, ok)).toThrow(InvalidInputError)
  })

  test.prop([feed, feed], { numRuns: runs(500) })(
    'property: derived x EUR / USD reproduces ETH / USD within half a unit of the 18th place times EUR / USD, and no other answer is nearer',
    (ethUsd, eurUsd) => {
      const { answer: derived, decimals: d } = derivedPrice(ethUsd, eurUsd)
      expect(d).toBe(18)
      // in units of 10^-(18 + dq + de): derived x q x 10^de against e x 10^(18 + dq)
      const scale = 10n ** BigInt(ethUsd.decimals)
      const exact = ethUsd.answer * 10n ** BigInt(18 + eurUsd.decimals)
      const error = derived * eurUsd.answer * scale - exact
      const unit = eurUsd.answer * scale // one unit of the 18th place, times EUR / USD
      const abs = error < 0n ? -error : error
      expect(2n * abs <= unit).toBe(true)
      // half-even: on a tie the derived answer is even; otherwise both neighbours are farther
      if (2n * abs === unit) expect(derived % 2n).toBe(0n)
      else {
        const below = (derived - 1n) * unit - exact
        const above = (derived + 1n) * unit - exact
        expect((below < 0n ? -below : below) > abs).toBe(true)
        expect((above < 0n ? -above : above) > abs).toBe(true)
      }
    },
  )

  test.prop([fc.bigInt({ min: 0n, max: 10n ** 20n }), decimals], {
    numRuns: runs(200),
  })('property: a tie (k + 1/2 units) rounds to the even neighbour', (k, dq) => {
    // (2k + 1) / 2 at 18 decimals over EUR / USD = 2 (at dq decimals: 2 x 10^dq): the exact value is k + 1/2 units
    const ethUsd = { answer: 2n * k + 1n, decimals: 18 }
    const eurUsd = { answer: 2n * 10n ** BigInt(dq), decimals: dq }
    const even = k % 2n === 0n ? k : k + 1n
    expect(derivedPrice(ethUsd, eurUsd).answer).toBe(even)
  })
})
