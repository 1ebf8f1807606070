import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { Dec, decFloorToBigint, toDec } from './decimal.ts'
import { computeRebate, prepareDiscount, validateTargetFeeRate } from './discount.ts'
import { InvalidInputError } from './errors.ts'
import { formatUnits18 } from './units.ts'

const E = 10n ** 18n

describe('validateTargetFeeRate', () => {
  test('behavior: accepts 0 <= t <= g and normalizes; rejects anything else with TARGET_FEE_RATE_OUT_OF_RANGE', () => {
    expect(validateTargetFeeRate('0.080', 1000)).toBe('0.08')
    expect(validateTargetFeeRate('0.1', 1000)).toBe('0.1')
    expect(validateTargetFeeRate('0', 1000)).toBe('0')
    for (const bad of ['0.1000000000000000001', '0.11', '-0.01', 'abc', '1e-2', '']) {
      expect(() => validateTargetFeeRate(bad, 1000), bad).toThrow(InvalidInputError)
    }
    expect(() => validateTargetFeeRate('0.2', 1000)).toThrow(
      expect.objectContaining({ code: 'TARGET_FEE_RATE_OUT_OF_RANGE', details: expect.anything() }),
    )
  })
})

describe('prepareDiscount', () => {
  test('behavior: discount = max(0, g - t); a target of 0.1 at a 10 % fee means no discount', () => {
    expect(prepareDiscount(1000, '0.08').discount_rate).toBe('0.02')
    expect(prepareDiscount(1000, '0.1').discount_rate).toBe('0')
    expect(prepareDiscount(1000, null).discount_rate).toBe('0')
    expect(prepareDiscount(500, '0.08').discount_rate).toBe('0')
    expect(prepareDiscount(1500, '0').discount_rate).toBe('0.15')
    expect(() => prepareDiscount(1000, '1.01')).toThrow(InvalidInputError)
  })
})

describe('computeRebate', () => {
  test('behavior: rebate = gross x discount, capped at the platform fee', () => {
    const twoPercent = prepareDiscount(1000, '0.08')
    expect(computeRebate(twoPercent, E, 25n * 10n ** 15n, 1n, 1n)).toEqual({
      rebate_eth: 20n * 10n ** 15n,
      rebate_lseth: 20n * 10n ** 15n,
      platform_fees_at_discount_rate_eth: 5n * 10n ** 15n,
      capped: false,
    })
    const capped = computeRebate(prepareDiscount(1000, '0'), E, 25n * 10n ** 15n, 11n, 10n)
    expect(capped.rebate_eth).toBe(25n * 10n ** 15n)
    expect(capped.capped).toBe(true)
    expect(capped.platform_fees_at_discount_rate_eth).toBe(0n)
    // LsETH at rate 1.1, floor
    expect(capped.rebate_lseth).toBe((25n * 10n ** 15n * 10n) / 11n)
    expect(computeRebate(twoPercent, -E, 0n, 1n, 1n).rebate_eth).toBe(0n)
  })

  test('behavior: a fractional base (fees / g on a charged report): floor(base x discount), base = num / den', () => {
    // fees 15 wei at g = 0.15: base 100 wei; target 0.12 -> discount 0.03 -> rebate 3 wei
    const threePercent = prepareDiscount(1500, '0.12')
    expect(computeRebate(threePercent, 15n * 10_000n, 4n, 1n, 1n, 1500n).rebate_eth).toBe(3n)
    // fees 14 wei: base 93.33 wei -> floor(2.8) = 2; the wallet pays 12 = ceil(0.12 x 93.33)
    expect(computeRebate(threePercent, 14n * 10_000n, 4n, 1n, 1n, 1500n).rebate_eth).toBe(2n)
    expect(() => computeRebate(threePercent, 1n, 0n, 1n, 1n, 0n)).toThrow(InvalidInputError)
  })

  const arbCase = fc.record({
    gross: fc.bigInt({ min: -(10n ** 24n), max: 10n ** 24n }),
    bps: fc.integer({ min: 0, max: 10_000 }),
    platformShare: fc.bigInt({ min: 0n, max: E }),
    target: fc.bigInt({ min: 0n, max: E }),
  })

  test.prop([arbCase], { numRuns: runs(400) })(
    'property: 0 <= rebate <= platform fee, and equals the decimal.js min(platform, floor(gross x (g - t)))',
    ({ gross, bps, platformShare, target }) => {
      const g = toDec(bps).div(10_000)
      const fees = gross > 0n ? decFloorToBigint(toDec(gross).mul(g)) : 0n
      const platform = (fees * platformShare) / E
      const t = formatUnits18(target)
      const rebate = computeRebate(prepareDiscount(bps, t), gross, platform, 1001n, 1000n)
      expect(rebate.rebate_eth >= 0n && rebate.rebate_eth <= platform).toBe(true)
      const uncapped = gross > 0n ? decFloorToBigint(toDec(gross).mul(Dec.max(0, g.minus(t)))) : 0n
      expect(rebate.rebate_eth).toBe(uncapped < platform ? uncapped : platform)
    },
  )

  test.prop([arbCase], { numRuns: runs(400) })(
    'property: when not capped, the fee after rebate is the target fee rate to within one wei',
    ({ gross, bps, target }) => {
      const g = toDec(bps).div(10_000)
      const t = Dec.min(toDec(formatUnits18(target)), g)
      if (gross <= 0n) return
      const fees = decFloorToBigint(toDec(gross).mul(g))
      // the whole fee as platform fee: the cap never binds
      const rebate = computeRebate(prepareDiscount(bps, t.toFixed()), gross, fees, 1n, 1n)
      expect(rebate.capped).toBe(false)
      const effective = toDec(fees - rebate.rebate_eth)
      expect(effective.minus(toDec(gross).mul(t)).abs().lt(1)).toBe(true)
    },
  )
})
