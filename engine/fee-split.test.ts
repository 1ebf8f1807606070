import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { arbSchedule } from '../fixtures/engine/arbitraries.ts'
import { TEST_V0_SCHEDULE, TEST_V3_SCHEDULE } from '../fixtures/engine/hand-report.ts'
import { runs } from '../fixtures/property-runs.ts'
import { decFloorToBigint, toDec } from './decimal.ts'
import { InvalidInputError } from './errors.ts'
import { feePartRates, prepareFeeSplit, splitFee } from './fee-split.ts'

const V0 = TEST_V0_SCHEDULE
const V3 = TEST_V3_SCHEDULE
const arbFee = fc.oneof(fc.bigInt({ min: 0n, max: 1000n }), fc.bigInt({ min: 0n, max: 2n ** 90n }))

describe('splitFee', () => {
  test('behavior: splits a V3 fee by the schedule; off-platform the platform share goes to lc', () => {
    const prepared = prepareFeeSplit(V3)
    expect(splitFee(prepared, 1000n, true)).toEqual({
      dao_fees_eth: 0n,
      provider_fees_eth: 0n,
      slashing_fees_eth: 0n,
      lc_fees_eth: 400n,
      tech_provider_fees_eth: 100n,
      operator_fees_eth: 250n,
      platform_fees_eth: 250n,
    })
    expect(splitFee(prepared, 1000n, false).lc_fees_eth).toBe(650n)
    expect(splitFee(prepared, 1000n, false).platform_fees_eth).toBe(0n)
  })

  test('behavior: rounds each v0 part down and gives the remainder wei to dao', () => {
    // 7 wei: provider floor(1.05) = 1, slashing floor(0.7) = 0, operators floor(2.1) = 2, platform floor(1.75) = 1
    expect(splitFee(prepareFeeSplit(V0), 7n, true)).toEqual({
      dao_fees_eth: 3n,
      provider_fees_eth: 1n,
      slashing_fees_eth: 0n,
      lc_fees_eth: 0n,
      tech_provider_fees_eth: 0n,
      operator_fees_eth: 2n,
      platform_fees_eth: 1n,
    })
    expect(() => splitFee(prepareFeeSplit(V0), -1n, true)).toThrow(InvalidInputError)
  })

  test.prop([fc.constantFrom('v0' as const, 'v3' as const).chain(arbSchedule), arbFee, fc.boolean()], {
    numRuns: runs(400),
  })(
    'property: parts sum exactly to the fee; each part is the decimal.js floor of fee x share',
    (schedule, fee, on) => {
      const parts = splitFee(prepareFeeSplit(schedule), fee, on)
      const sum = Object.values(parts).reduce((a, b) => a + b, 0n)
      expect(sum).toBe(fee)
      const floor = (share: string) => decFloorToBigint(toDec(fee).mul(share))
      expect(parts.operator_fees_eth).toBe(floor(schedule.shares.operators))
      expect(parts.platform_fees_eth).toBe(on ? floor(schedule.shares.platform) : 0n)
      if (schedule.model === 'v0') {
        expect(parts.provider_fees_eth).toBe(floor(schedule.shares.provider))
        expect(parts.slashing_fees_eth).toBe(floor(schedule.shares.slashing_coverage))
        expect(parts.dao_fees_eth >= floor(schedule.shares.dao)).toBe(true)
        expect(parts.lc_fees_eth + parts.tech_provider_fees_eth).toBe(0n)
      } else {
        expect(parts.tech_provider_fees_eth).toBe(floor(schedule.shares.tech_provider))
        expect(parts.lc_fees_eth >= floor(schedule.shares.lc)).toBe(true)
        expect(parts.dao_fees_eth + parts.provider_fees_eth + parts.slashing_fees_eth).toBe(0n)
      }
      for (const value of Object.values(parts)) expect(value >= 0n).toBe(true)
    },
  )

  test.prop([fc.constantFrom('v0' as const, 'v3' as const).chain(arbSchedule), arbFee], {
    numRuns: runs(200),
  })('property: off-platform, dao / lc receive exactly what the platform would have', (schedule, fee) => {
    const prepared = prepareFeeSplit(schedule)
    const on = splitFee(prepared, fee, true)
    const off = splitFee(prepared, fee, false)
    expect(off.dao_fees_eth + off.lc_fees_eth).toBe(on.dao_fees_eth + on.lc_fees_eth + on.platform_fees_eth)
    expect(off.operator_fees_eth).toBe(on.operator_fees_eth)
  })
})

describe('feePartRates', () => {
  test('behavior: each share times the fee-to-gross ratio; zero on a loss day', () => {
    const rates = feePartRates(prepareFeeSplit(V3), { num: 1n, den: 10n }, true)
    expect(rates.period_lc_fees_rate).toBe('0.04')
    expect(rates.period_tech_provider_fees_rate).toBe('0.01')
    expect(rates.period_platform_fees_rate).toBe('0.025')
    expect(rates.period_dao_fees_rate).toBe('0')
    expect(feePartRates(prepareFeeSplit(V3), { num: 1n, den: 10n }, false).period_lc_fees_rate).toBe('0.065')
    expect(feePartRates(prepareFeeSplit(V0), { num: 0n, den: 1n }, true).period_dao_fees_rate).toBe('0')
    expect(feePartRates(prepareFeeSplit(V0), { num: 3n, den: 20n }, false).period_dao_fees_rate).toBe(
      '0.0675',
    )
  })
})
