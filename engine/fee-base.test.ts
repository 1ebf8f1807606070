import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { arbElFeesOnLossReport, arbWallet, E } from '../fixtures/engine/arbitraries.ts'
import { TEST_V0_SCHEDULE, TEST_V3_SCHEDULE, V3_CUTOVER } from '../fixtures/engine/hand-report.ts'
import { runs } from '../fixtures/property-runs.ts'
import { type Dec, toDec } from './decimal.ts'
import { feeBearingRewards, reportFeeBase } from './fee-base.ts'
import type { FeeModel } from './fee-schedule.ts'
import { feeSharesToMint } from './rates.ts'
import type { ReportInput, WalletInput, WalletRecord } from './wallet-record.ts'
import { computeWalletRecord, prepareReport } from './wallet-record.ts'

const MILLI = 10n ** 15n

/**
 * The River 1.2.1 report reproduced on anvil with mainnet bytecode (../shared/reference/real-bytecode-smoke):
 * a pool of 64.015 ETH over 64.003749370458417766 LsETH; the validators lose 0.02 ETH while 0.003 ETH of EL
 * fees arrive, so U = 63.998 ETH, and River (global fee 1500 bps) mints 450 043 590 992 253 fee shares on
 * trace.rewards = max(0, -0.02) + 0.003 = 0.003 ETH.
 */
function elFeesOnLossReport(timestamp: number): ReportInput {
  const supplyPreFee = 64_003_749_370_458_417_766n
  const underlying = 63_998n * MILLI
  const minted = feeSharesToMint({
    rewards: 3n * MILLI,
    supplyBefore: supplyPreFee,
    underlyingAfter: underlying,
    feeBps: 1500,
  })
  return {
    oracle_report: 'el-fees-on-loss',
    timestamp,
    underlying,
    supply_pre_fee: supplyPreFee,
    supply: supplyPreFee + minted,
    previous_underlying: 64_015n * MILLI,
    previous_supply: supplyPreFee,
    global_fee_bps: 1500,
    fee_schedule: timestamp < V3_CUTOVER ? TEST_V0_SCHEDULE : TEST_V3_SCHEDULE,
  }
}

const holder = (over: Partial<WalletInput> = {}): WalletInput => ({
  address: '0x00000000000000000000000000000000000000aa',
  shares: 10n * E,
  mints: 0n,
  burns: 0n,
  previous: null,
  ...over,
})

const onPlatform = (target: string | null) =>
  holder({ account_id: 'acc', org_id: 'org_p', on_platform: true, target_fee_rate: target })

/** The period rates of a record's model (dao / lc include the platform share off-platform). */
function modelRates(r: WalletRecord): string[] {
  return r.fee_model === 'v0'
    ? [
        r.period_dao_fees_rate,
        r.period_provider_fees_rate,
        r.period_slashing_fees_rate,
        r.period_operator_fees_rate,
        r.period_platform_fees_rate,
      ]
    : [
        r.period_lc_fees_rate,
        r.period_tech_provider_fees_rate,
        r.period_operator_fees_rate,
        r.period_platform_fees_rate,
      ]
}

/** The parts of a record's model, in the order of `modelRates`. */
function modelParts(r: WalletRecord): bigint[] {
  return r.fee_model === 'v0'
    ? [r.dao_fees_eth, r.provider_fees_eth, r.slashing_fees_eth, r.operator_fees_eth, r.platform_fees_eth]
    : [r.lc_fees_eth, r.tech_provider_fees_eth, r.operator_fees_eth, r.platform_fees_eth]
}

describe('reportFeeBase', () => {
  test('behavior: a fee above g x gross (gross negative, zero or small) is measured on fee / g; else on gross', () => {
    const charged = { fee_base: 'charged', fee_of_base: { num: 1500n, den: 10_000n } }
    // gross -0.017 per share, fee 0.00045: charged
    expect(reportFeeBase({ num: -17n, den: 1000n }, { num: 45n, den: 100_000n }, 1500n)).toEqual(charged)
    // gross 0: charged
    expect(reportFeeBase({ num: 0n, den: 1n }, { num: 1n, den: 100n }, 1500n)).toEqual(charged)
    // gross 0.001, fee 0.00045 > 0.15 x 0.001: charged
    expect(reportFeeBase({ num: 1n, den: 1000n }, { num: 45n, den: 100_000n }, 1500n)).toEqual(charged)
    // gross 0.003, fee 0.00045 = 0.15 x 0.003 exactly: gross (ratio g either way)
    expect(reportFeeBase({ num: 3n, den: 1000n }, { num: 45n, den: 100_000n }, 1500n)).toEqual({
      fee_base: 'gross',
      fee_of_base: { num: 45n * 1000n, den: 100_000n * 3n },
    })
    // no fee: gross, ratio 0 (a plain loss day, and a day with a zero global fee)
    expect(reportFeeBase({ num: -1n, den: 1n }, { num: 0n, den: 1n }, 1500n).fee_of_base.num).toBe(0n)
    expect(reportFeeBase({ num: -1n, den: 1n }, { num: 1n, den: 1n }, 0n).fee_base).toBe('gross')
  })

  test('behavior: feeBearingRewards is the gross rewards, or fees x 10000 / bps when charged', () => {
    expect(feeBearingRewards('gross', 100n, 10n, 1000n)).toEqual({ num: 100n, den: 1n })
    expect(feeBearingRewards('charged', -50n, 15n, 1500n)).toEqual({ num: 150_000n, den: 1500n })
  })
})

describe('a fee minted while gross rewards are negative (River 1.x EL fees on a loss day)', () => {
  test('behavior: the mainnet-bytecode report: 450 043 590 992 253 fee shares on 0.003 ETH of EL fees', () => {
    const report = elFeesOnLossReport(V3_CUTOVER)
    expect(report.supply - report.supply_pre_fee).toBe(450_043_590_992_253n)
    const ctx = prepareReport(report)
    expect(ctx.fee_base).toBe('charged')
    expect(ctx.fee_of_base).toEqual({ num: 1500n, den: 10_000n })
  })

  test('behavior: v0 — the rates are the shares x g, the rebate is the discount on fee / g, the target is reached', () => {
    const ctx = prepareReport(elFeesOnLossReport(V3_CUTOVER - 86_400))
    const r = computeWalletRecord(ctx, onPlatform('0.12'))
    expect(r.fee_model).toBe('v0')
    expect(r.gross_rewards_eth).toBe(-2_656_094_395_595_913n)
    expect(r.rewards_eth).toBe(-2_726_402_776_655_804n)
    expect(r.fees_eth).toBe(70_308_381_059_891n)
    expect(modelParts(r)).toEqual([
      14_061_676_211_980n,
      10_546_257_158_983n,
      7_030_838_105_989n,
      21_092_514_317_967n,
      17_577_095_264_972n,
    ])
    // 0.15 x (0.2, 0.15, 0.1, 0.3, 0.25): they sum to g = 0.15
    expect(modelRates(r)).toEqual(['0.03', '0.0225', '0.015', '0.045', '0.0375'])
    expect(r.discount_rate).toBe('0.03')
    // fee-bearing rewards = fee / 0.15 = 468 722 540 399 273.3 wei; rebate = floor(that x 0.03) = floor(fee / 5)
    expect(r.rebate_eth).toBe(14_061_676_211_978n)
    expect(r.platform_fees_at_discount_rate_eth).toBe(3_515_419_052_994n)
    // the wallet pays fee - rebate = 56 246 704 847 913 = ceil(0.12 x 468 722 540 399 273.3)
    expect(r.fees_eth - r.rebate_eth).toBe(56_246_704_847_913n)
    expect(r.rebate_lseth).toBe((r.rebate_eth * ctx.supply) / ctx.underlying)
  })

  test('behavior: V3 — the same rule; a target of 0 is capped at the platform fee; off-platform lc takes the platform share', () => {
    const ctx = prepareReport(elFeesOnLossReport(V3_CUTOVER))
    const r = computeWalletRecord(ctx, onPlatform('0.12'))
    expect(r.fee_model).toBe('v3')
    expect(r.fees_eth).toBe(70_308_381_059_891n)
    expect(modelParts(r)).toEqual([
      28_123_352_423_958n,
      7_030_838_105_989n,
      17_577_095_264_972n,
      17_577_095_264_972n,
    ])
    expect(modelRates(r)).toEqual(['0.06', '0.015', '0.0375', '0.0375'])
    expect(r.rebate_eth).toBe(14_061_676_211_978n)
    const zero = computeWalletRecord(ctx, onPlatform('0'))
    expect(zero.discount_rate).toBe('0.15')
    expect(zero.rebate_eth).toBe(zero.platform_fees_eth)
    expect(zero.platform_fees_at_discount_rate_eth).toBe(0n)
    const off = computeWalletRecord(ctx, holder({ target_fee_rate: '0' }))
    expect(off.period_lc_fees_rate).toBe('0.0975')
    expect(off.period_platform_fees_rate).toBe('0')
    expect(off.lc_fees_eth).toBe(45_700_447_688_930n)
    expect(off.rebate_eth).toBe(0n)
  })

  test('behavior: the fee-bearing rewards are the wallet share of trace.rewards, to the fee mint floor', () => {
    const report = elFeesOnLossReport(V3_CUTOVER)
    const r = computeWalletRecord(prepareReport(report), onPlatform(null))
    const base = toDec(r.fees_eth).mul(10_000).div(1500)
    const share = toDec(3n * MILLI)
      .mul(toDec(r.balance_lseth))
      .div(toDec(report.supply_pre_fee))
    // fee_w is floor(s x gross step) - floor(s x net step): within a wei of s x fee step, i.e. 1 / g wei of base
    expect(base.minus(share).abs().lte(toDec(10_000n).div(1500).plus(1))).toBe(true)
  })

  test('behavior: a CL loss smaller than the EL fees (gross > 0 but below what River charged) takes the same base', () => {
    // validators -0.002 ETH, EL fees +0.003 ETH: the pool gains 0.001 ETH, River charges 0.003 ETH
    const report = { ...elFeesOnLossReport(V3_CUTOVER), previous_underlying: 63_997n * MILLI }
    const ctx = prepareReport(report)
    const r = computeWalletRecord(ctx, onPlatform('0.12'))
    expect(r.gross_rewards_eth > 0n).toBe(true)
    expect(r.fees_eth * 10_000n > 1500n * r.gross_rewards_eth).toBe(true)
    expect(ctx.fee_base).toBe('charged')
    // not 3x g as fee / gross would say: the shares of g, as on any day
    expect(modelRates(r)).toEqual(['0.06', '0.015', '0.0375', '0.0375'])
    expect(r.rebate_eth).toBe(r.fees_eth / 5n)
  })

  test('behavior: a day whose pool gained what River charged keeps gross rewards as the base', () => {
    // the validators gain 0.1 ETH (no EL fees): River charges 0.1 ETH, the pool gains 0.1 ETH
    const report = elFeesOnLossReport(V3_CUTOVER)
    const underlying = 64_115n * MILLI
    const minted = feeSharesToMint({
      rewards: 100n * MILLI,
      supplyBefore: report.supply_pre_fee,
      underlyingAfter: underlying,
      feeBps: 1500,
    })
    const ctx = prepareReport({ ...report, underlying, supply: report.supply_pre_fee + minted })
    expect(ctx.fee_base).toBe('gross')
    const r = computeWalletRecord(ctx, onPlatform('0.12'))
    expect(r.rebate_eth).toBe((r.gross_rewards_eth * 3n) / 100n)
  })

  for (const model of ['v0', 'v3'] as const satisfies readonly FeeModel[]) {
    test.prop(
      [
        arbElFeesOnLossReport(model).chain((report) =>
          fc.tuple(
            fc.constant(report),
            fc.array(arbWallet(report.supply_pre_fee / 4n), { minLength: 1, maxLength: 4 }),
          ),
        ),
      ],
      { numRuns: runs(150) },
    )(
      `property: ${model} loss days with EL fees: parts sum to the fee, rates x base explain it, the target is reached`,
      ([report, wallets]) => {
        const ctx = prepareReport(report)
        const bps = BigInt(report.global_fee_bps)
        const g = toDec(bps).div(10_000)
        const minted = report.supply > report.supply_pre_fee
        for (const w of wallets) {
          const r = computeWalletRecord(ctx, w)
          expect(r.fee_model).toBe(model)
          // a fee minted while gross rewards are not positive is always measured on fee / g
          if (minted && r.gross_rewards_eth <= 0n && r.fees_eth > 0n) expect(ctx.fee_base).toBe('charged')
          // the parts sum exactly to the fee; none is negative
          const parts = modelParts(r)
          expect(parts.reduce((a, b) => a + b, 0n)).toBe(r.fees_eth)
          for (const part of parts) expect(part >= 0n).toBe(true)
          // the rates explain the fee actually charged: part = rate x base up to the split's wei floors (fewer
          // than the parts) and the 18-digit rounding of each rate (base x 1e-18)
          const base: Dec =
            ctx.fee_base === 'charged'
              ? toDec(r.fees_eth).mul(10_000).div(toDec(bps))
              : toDec(r.gross_rewards_eth)
          const tolerance = base
            .abs()
            .mul('1e-18')
            .plus(parts.length + 1)
          const rates = modelRates(r)
          rates.forEach((rate, i) => {
            expect(
              toDec(parts[i] as bigint)
                .minus(base.mul(rate))
                .abs()
                .lte(tolerance),
            ).toBe(true)
          })
          if (r.fees_eth > 0n && ctx.fee_base === 'charged') {
            // the rates of the model sum to g (each rounded down at 18 digits)
            const sum = rates.reduce((a, b) => a.plus(b), toDec(0n))
            expect(g.minus(sum).gte(0) && g.minus(sum).lte(toDec(parts.length).mul('1e-18'))).toBe(true)
          }
          // the rebate: within the platform fee; uncapped, the wallet pays t x base, rounded up to the wei
          expect(r.rebate_eth >= 0n && r.rebate_eth <= r.platform_fees_eth).toBe(true)
          expect(r.platform_fees_at_discount_rate_eth).toBe(r.platform_fees_eth - r.rebate_eth)
          const target = r.target_fee_rate
          if (ctx.fee_base !== 'charged' || target === null || toDec(target).gt(g)) continue
          const wanted = base.mul(g.minus(target))
          if (wanted.gt(toDec(r.platform_fees_eth))) {
            expect(r.rebate_eth).toBe(r.platform_fees_eth)
            continue
          }
          const miss = toDec(r.fees_eth - r.rebate_eth).minus(base.mul(target))
          expect(miss.gte(0) && miss.lt(1)).toBe(true)
        }
      },
    )
  }
})
