import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import {
  arbPartition,
  arbRawReport,
  arbRealisticReport,
  arbStep,
  arbWallet,
  E,
  protocolStep,
} from '../fixtures/engine/arbitraries.ts'
import {
  handReport as handReportOf,
  TEST_V0_SCHEDULE,
  TEST_V3_SCHEDULE,
  V3_CUTOVER,
} from '../fixtures/engine/hand-report.ts'
import { runs } from '../fixtures/property-runs.ts'
import { Dec, decFloorToBigint, toDec } from './decimal.ts'
import { EngineError, FeeScheduleError, InvalidInputError } from './errors.ts'
import { floorDiv } from './units.ts'
import type { ReportInput, WalletInput, WalletRecord } from './wallet-record.ts'
import {
  CUMULATIVE_FIELDS,
  computeWalletRecord,
  prepareReport,
  WALLET_AMOUNT_FIELDS,
  walletTotalsOf,
} from './wallet-record.ts'

const V0 = TEST_V0_SCHEDULE
const V3 = TEST_V3_SCHEDULE
const CUTOVER = V3_CUTOVER

/** The hand-checkable report: a 1000 ETH pool at rate 1 earns 1 ETH at a 10 % fee. */
const handReport = (timestamp: number): ReportInput => handReportOf(timestamp, 'hand')

const wallet = (over: Partial<WalletInput> = {}): WalletInput => ({
  address: '0x00000000000000000000000000000000000000aa',
  shares: 100n * E,
  mints: 0n,
  burns: 0n,
  previous: null,
  ...over,
})

/** The decimal.js reference path: the same definitions, computed with the engine's Dec clone. */
function reference(report: ReportInput, w: WalletInput): Partial<Record<keyof WalletRecord, bigint>> {
  const U = toDec(report.underlying)
  const Um = toDec(report.underlying_at_fee_mint ?? report.underlying)
  const S0 = toDec(report.supply_pre_fee)
  const S = toDec(report.supply)
  const Up = toDec(report.previous_underlying)
  const Sp = toDec(report.previous_supply)
  const shares = toDec(w.shares)
  // shares x (Um/S0 - Up/Sp) written over one denominator, floored once; a rate after the report above the
  // pre-fee rate (a burn's floor outweighing a tiny fee mint) is all gross, the fee 0. The two rates are
  // compared, and the chosen one used, as fractions: a rounded quotient (U/S at 80 digits) could floor the
  // product one wei low
  const [rateTop, rateBottom] = U.mul(S0).gt(Um.mul(S)) ? [U, S] : [Um, S0]
  const gross = decFloorToBigint(
    shares.mul(rateTop.mul(Sp).minus(Up.mul(rateBottom))).div(rateBottom.mul(Sp)),
  )
  const net = decFloorToBigint(shares.mul(U.mul(Sp).minus(Up.mul(S))).div(S.mul(Sp)))
  const fees = gross - net
  const onPlatform = w.on_platform === true
  const part = (share: string) => decFloorToBigint(toDec(fees).mul(share))
  const schedule = report.fee_schedule
  const platform = onPlatform ? part(schedule.shares.platform) : 0n
  const operators = part(schedule.shares.operators)
  const out: Partial<Record<keyof WalletRecord, bigint>> = {
    gross_rewards_eth: gross,
    rewards_eth: net,
    fees_eth: fees,
    platform_fees_eth: platform,
    operator_fees_eth: operators,
  }
  const toLseth = (eth: bigint) => decFloorToBigint(toDec(eth).mul(S).div(U))
  if (schedule.model === 'v0') {
    const provider = part(schedule.shares.provider)
    const slashing = part(schedule.shares.slashing_coverage)
    Object.assign(out, {
      provider_fees_eth: provider,
      slashing_fees_eth: slashing,
      dao_fees_eth: fees - provider - slashing - operators - platform,
    })
  } else {
    const tech = part(schedule.shares.tech_provider)
    const lc = fees - tech - operators - platform
    Object.assign(out, {
      tech_provider_fees_eth: tech,
      lc_fees_eth: lc,
      period_lc_fees_lseth: U.isZero() ? 0n : toLseth(lc),
      period_tech_provider_fees_lseth: U.isZero() ? 0n : toLseth(tech),
    })
  }
  const target = onPlatform ? (w.target_fee_rate ?? null) : null
  // the fee-bearing rewards (docs/interface.md): the gross rewards, or fees / g when the report's fee per share
  // exceeds g x its gross per share (River charging EL fees on a day the pool gained less), compared exactly
  const bps = BigInt(report.global_fee_bps)
  const [Ui, Umi, S0i, Si, Upi, Spi] = [
    report.underlying,
    report.underlying_at_fee_mint ?? report.underlying,
    report.supply_pre_fee,
    report.supply,
    report.previous_underlying,
    report.previous_supply,
  ]
  const [topI, bottomI] = Ui * S0i > Umi * Si ? [Ui, Si] : [Umi, S0i]
  // per share: fee = top/bottom - U/S, gross = top/bottom - Up/Sp
  const feeTop = topI * Si - Ui * bottomI
  const charged = feeTop > 0n && bps > 0n && feeTop * Spi * 10_000n > bps * (topI * Spi - Upi * bottomI) * Si
  let rebate = 0n
  if (target !== null) {
    const discount = Dec.max(0, toDec(report.global_fee_bps).div(10_000).minus(toDec(target)))
    const base = charged ? toDec(fees).mul(10_000) : toDec(gross)
    const uncapped = base.gt(0) ? decFloorToBigint(base.mul(discount).div(charged ? toDec(bps) : 1)) : 0n
    rebate = uncapped < platform ? uncapped : platform
  }
  out.rebate_eth = rebate
  out.rebate_lseth = U.isZero() ? 0n : toLseth(rebate)
  out.platform_fees_at_discount_rate_eth = platform - rebate
  return out
}

describe('computeWalletRecord', () => {
  test('behavior: the hand example (100 LsETH of a 1000 ETH pool earning 1 ETH at 10 %) gives exact amounts', () => {
    const ctx = prepareReport(handReport(CUTOVER))
    const record = computeWalletRecord(
      ctx,
      wallet({ on_platform: true, org_id: 'org_a', target_fee_rate: '0.08' }),
    )
    expect(ctx.rate_pre_fee).toBe('1.001')
    expect(record.conversion_rate).toBe('1.0009')
    expect(record.previous_conversion_rate).toBe('1')
    expect(record.gross_rewards_eth).toBe(100_000_000_000_000_000n)
    expect(record.rewards_eth).toBe(90_000_000_000_000_000n)
    expect(record.fees_eth).toBe(10_000_000_000_000_000n)
    expect(record.lc_fees_eth).toBe(4_000_000_000_000_000n)
    expect(record.tech_provider_fees_eth).toBe(1_000_000_000_000_000n)
    expect(record.operator_fees_eth).toBe(2_500_000_000_000_000n)
    expect(record.platform_fees_eth).toBe(2_500_000_000_000_000n)
    expect(record.discount_rate).toBe('0.02')
    expect(record.rebate_eth).toBe(2_000_000_000_000_000n)
    expect(record.platform_fees_at_discount_rate_eth).toBe(500_000_000_000_000n)
    // LsETH at rate_k = 1.0009000...: floor(eth x S / U)
    expect(record.period_lc_fees_lseth).toBe((4_000_000_000_000_000n * ctx.supply) / ctx.underlying)
    expect(record.total_rewards_eth).toBe(record.rewards_eth)
  })

  test('behavior: a loss day yields zero fees and negative rewards', () => {
    const ctx = prepareReport({ ...handReport(CUTOVER), underlying: 999n * E, supply: 1000n * E })
    const record = computeWalletRecord(
      ctx,
      wallet({ on_platform: true, org_id: 'org_a', target_fee_rate: '0' }),
    )
    expect(record.fees_eth).toBe(0n)
    expect(record.rewards_eth).toBe(-100_000_000_000_000_000n)
    expect(record.gross_rewards_eth).toBe(record.rewards_eth)
    expect(record.rebate_eth).toBe(0n)
    expect(record.platform_fees_eth).toBe(0n)
    expect(record.period_lc_fees_rate).toBe('0')
  })

  test('behavior: an off-platform wallet pays no platform fee; dao gets that share; no rebate despite a target', () => {
    const ctx = prepareReport(handReport(CUTOVER - 1))
    const on = computeWalletRecord(ctx, wallet({ on_platform: true, org_id: 'org_a' }))
    const off = computeWalletRecord(
      ctx,
      wallet({ on_platform: false, org_id: 'org_a', target_fee_rate: '0' }),
    )
    expect(off.platform_fees_eth).toBe(0n)
    expect(off.dao_fees_eth).toBe(on.dao_fees_eth + on.platform_fees_eth)
    expect(off.rebate_eth).toBe(0n)
    expect(off.discount_rate).toBe('0')
    expect(off.target_fee_rate).toBeNull()
    expect(off.period_platform_fees_rate).toBe('0')
    expect(on.fee_model).toBe('v0')
    expect(on.lc_fees_eth).toBe(0n)
  })

  test('behavior: invalid inputs throw typed engine errors', () => {
    const ctx = prepareReport(handReport(CUTOVER))
    expect(() => computeWalletRecord(ctx, wallet({ shares: -1n }))).toThrow(InvalidInputError)
    expect(() => computeWalletRecord(ctx, wallet({ on_platform: true }))).toThrow(/org/)
    expect(() =>
      computeWalletRecord(ctx, wallet({ on_platform: true, org_id: 'o', target_fee_rate: '1.5' })),
    ).toThrow(EngineError)
    expect(() => prepareReport({ ...handReport(CUTOVER), supply: 999n * E })).toThrow(InvalidInputError)
    expect(() => prepareReport({ ...handReport(CUTOVER), fee_schedule: V0 })).toThrow(FeeScheduleError)
    expect(() => prepareReport({ ...handReport(CUTOVER), global_fee_bps: 10_001 })).toThrow(InvalidInputError)
  })

  test('behavior: the superset record carries every v1 field and every v0 additional field of the interface', () => {
    const v1 =
      'oracle_report, address, account_id, org_id, date, balance_lseth, rewards_eth, total_rewards_eth, conversion_rate, previous_conversion_rate, mints_lseth, total_mints_lseth, burns_lseth, total_burns_lseth, fees_eth, total_fees_eth, period_lc_fees_lseth, total_lc_fees_lseth, period_tech_provider_fees_lseth, total_tech_provider_fees_lseth, platform_fees_eth, total_platform_fees_eth, operator_fees_eth, total_operator_fees_eth'
    const v0 =
      'dao_fees_eth, total_dao_fees_eth, provider_fees_eth, total_provider_fees_eth, slashing_fees_eth, total_slashing_fees_eth, platform_fees_at_discount_rate_eth, total_platform_fees_at_discount_rate_eth, gross_protocol_fee_rate, discount_rate, gross_fees_eth, total_gross_fees_eth, gross_rewards_eth, total_gross_rewards_eth, rebate_eth, total_rebate_eth, rebate_lseth, total_rebate_lseth'
    const record = computeWalletRecord(prepareReport(handReport(CUTOVER)), wallet())
    for (const field of [...v1.split(', '), ...v0.split(', ')]) expect(record).toHaveProperty(field)
  })

  test.prop([arbRawReport(), fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 4 })], {
    numRuns: runs(300),
  })('property: net + fees = gross exactly and fees >= 0, for any report', (report, seeds) => {
    const ctx = prepareReport(report)
    for (const seed of seeds) {
      const shares = (report.supply_pre_fee * BigInt(seed)) / 1000n
      const record = computeWalletRecord(ctx, wallet({ shares }))
      expect(record.rewards_eth + record.fees_eth).toBe(record.gross_rewards_eth)
      expect(record.fees_eth >= 0n).toBe(true)
      expect(record.gross_fees_eth).toBe(record.fees_eth)
    }
  })

  test.prop([arbRealisticReport(undefined, { loss: true }), fc.bigInt({ min: 0n, max: 10n ** 24n })], {
    numRuns: runs(200),
  })('property: a loss day yields zero fees and non-positive rewards', (report, shares) => {
    const record = computeWalletRecord(
      prepareReport(report),
      wallet({ shares, on_platform: true, org_id: 'o' }),
    )
    expect(record.fees_eth).toBe(0n)
    expect(record.rewards_eth <= 0n).toBe(true)
    expect(record.platform_fees_eth + record.rebate_eth + record.operator_fees_eth).toBe(0n)
  })

  test.prop([arbRawReport().chain((r) => fc.tuple(fc.constant(r), arbWallet(r.supply_pre_fee)))], {
    numRuns: runs(400),
  })('property: the fee parts sum exactly to the fee', ([report, w]) => {
    const r = computeWalletRecord(prepareReport(report), w)
    const parts =
      r.fee_model === 'v0'
        ? r.dao_fees_eth +
          r.provider_fees_eth +
          r.slashing_fees_eth +
          r.operator_fees_eth +
          r.platform_fees_eth
        : r.lc_fees_eth + r.tech_provider_fees_eth + r.operator_fees_eth + r.platform_fees_eth
    expect(parts).toBe(r.fees_eth)
    for (const field of WALLET_AMOUNT_FIELDS) {
      if (field !== 'rewards_eth' && field !== 'gross_rewards_eth' && !field.startsWith('total_')) {
        expect(r[field] >= 0n).toBe(true)
      }
    }
  })

  test.prop([arbRawReport().chain((r) => fc.tuple(fc.constant(r), arbWallet(r.supply_pre_fee)))], {
    numRuns: runs(400),
  })('property: the bigint path equals the decimal.js reference path to the wei', ([report, w]) => {
    const record = computeWalletRecord(prepareReport(report), w)
    const expected = reference(report, w)
    for (const [field, value] of Object.entries(expected)) {
      expect({ field, value: record[field as keyof WalletRecord] }).toEqual({ field, value })
    }
  })

  test.prop(
    [
      arbRawReport().chain((r) =>
        fc.tuple(fc.constant(r), arbWallet(r.supply_pre_fee), fc.bigInt({ min: 0n, max: r.supply - 1n })),
      ),
    ],
    { numRuns: runs(300) },
  )(
    'property: with a burn after the fee mint (the withdrawal event) the bigint path still equals the reference',
    ([report, w, burned]) => {
      // the report transaction burns `burned` shares at the post-fee rate after the fee mint
      const paid = (burned * report.underlying) / report.supply
      const afterBurn: ReportInput = {
        ...report,
        underlying_at_fee_mint: report.underlying,
        underlying: report.underlying - paid,
        supply: report.supply - burned,
      }
      // the burn's floor can lift the rate by less than 1 wei over all shares: above the pre-fee rate when the
      // fee mint diluted less than that; the lift is then gross and the fee 0
      const record = computeWalletRecord(prepareReport(afterBurn), w)
      const expected = reference(afterBurn, w)
      for (const [field, value] of Object.entries(expected)) {
        expect({ field, value: record[field as keyof WalletRecord] }).toEqual({ field, value })
      }
      expect(record.fees_eth >= 0n).toBe(true)
    },
  )

  test('behavior: a rate after the report above the pre-fee rate by more than a burn rounds is refused', () => {
    const report = handReport(CUTOVER)
    expect(() =>
      prepareReport({ ...report, underlying_at_fee_mint: report.underlying - 10n ** 18n }),
    ).toThrow(/above the rate before the fee mint/)
    // without a burn (no underlying at the fee mint), a supply below the pre-fee supply lifts the rate: refused however small
    expect(() => prepareReport({ ...report, supply: report.supply_pre_fee - 1n })).toThrow(
      /above the rate before the fee mint/,
    )
  })

  test('behavior: a burn whose floor lifts the rate above a 1-share fee mint gives gross = net and no fee', () => {
    // the counterexample CI found: 4 wei of rewards mint 1 fee share, then the withdrawal event burns shares
    const S0 = 19342813113834066795298804n
    const U = 19342909827899635966413384n
    const burned = 149244383884942231611107n
    const paid = (burned * U) / (S0 + 1n)
    const report: ReportInput = {
      ...handReport(CUTOVER),
      underlying: U - paid,
      underlying_at_fee_mint: U,
      supply_pre_fee: S0,
      supply: S0 + 1n - burned,
      previous_underlying: U - 4n,
      previous_supply: S0,
    }
    expect(report.underlying * S0 > U * report.supply).toBe(true)
    const ctx = prepareReport(report)
    expect(ctx.gross_step).toEqual(ctx.net_step)
    const r = computeWalletRecord(ctx, wallet({ shares: S0 }))
    expect(r.fees_eth).toBe(0n)
    expect(r.gross_rewards_eth).toBe(r.rewards_eth)
    expect(r.gross_rewards_eth).toBeGreaterThanOrEqual(4n)
  })

  test('behavior: a burn that lifts the rate: gross is the shares at U/S exactly, in the engine and the reference', () => {
    // the counterexample CI found (2026-11-26): the reference took U/S as a quotient rounded at 80 digits and
    // floored 6 x it one wei low; the engine was right. 10 shares, no fee share, 4 burned: the 6 left hold
    // the whole pool after the burn
    const U = 11639977350927383628380311n
    const paid = (4n * U) / 10n
    const report: ReportInput = {
      ...handReport(CUTOVER),
      underlying: U - paid,
      underlying_at_fee_mint: U,
      supply_pre_fee: 10n,
      supply: 6n,
      previous_underlying: 0n,
      previous_supply: 5n,
    }
    const w = wallet({ shares: 6n })
    expect(computeWalletRecord(prepareReport(report), w).gross_rewards_eth).toBe(U - paid)
    expect(reference(report, w).gross_rewards_eth).toBe(U - paid)
  })

  test.prop([arbRealisticReport().chain((r) => fc.tuple(fc.constant(r), arbWallet(r.supply_pre_fee)))], {
    numRuns: runs(300),
  })(
    'property: rebate <= platform fee, and without the cap the fee after rebate is the target up to the report deviation',
    ([report, w]) => {
      const ctx = prepareReport(report)
      const r = computeWalletRecord(ctx, w)
      expect(r.rebate_eth >= 0n && r.rebate_eth <= r.platform_fees_eth).toBe(true)
      expect(r.platform_fees_at_discount_rate_eth).toBe(r.platform_fees_eth - r.rebate_eth)
      const target = r.target_fee_rate
      if (target === null || r.gross_rewards_eth <= 0n) return
      const g = toDec(report.global_fee_bps).div(10_000)
      const t = toDec(target)
      const uncapped = decFloorToBigint(toDec(r.gross_rewards_eth).mul(Dec.max(0, g.minus(t))))
      if (uncapped > r.platform_fees_eth || t.gt(g)) return
      // effective fee = fees - rebate; the target fee = t x gross. They differ by the report's own deviation of
      // the fee from g x gross (the on-chain mint floor) plus less than one wei of rebate rounding.
      const gross = toDec(r.gross_rewards_eth)
      const deviation = toDec(r.fees_eth).minus(gross.mul(g)).abs()
      const miss = toDec(r.fees_eth - r.rebate_eth)
        .minus(gross.mul(t))
        .abs()
      expect(miss.lte(deviation.plus(1))).toBe(true)
    },
  )

  test.prop(
    [
      fc
        .tuple(fc.bigInt({ min: E, max: 10n ** 25n }), fc.integer({ min: 2, max: 6 }))
        .chain(([supply, n]) =>
          fc.tuple(
            fc.constant(supply),
            fc.array(arbStep(supply), { minLength: n, maxLength: n }),
            fc.array(arbWallet(supply / 3n), { minLength: n, maxLength: n }),
          ),
        ),
    ],
    { numRuns: runs(150) },
  )(
    'property: cumulative totals equal the sum of period values over successive reports',
    ([supply, steps, wallets]) => {
      let U = supply
      let S = supply
      let previous: WalletRecord | null = null
      const sums = new Map<string, bigint>()
      steps.forEach((step, k) => {
        const after = protocolStep(U, S, step)
        const ctx = prepareReport({
          oracle_report: String(k),
          timestamp: CUTOVER - 3 * 86_400 + k * 86_400,
          underlying: after.underlying,
          supply_pre_fee: after.supplyPreFee,
          supply: after.supply,
          previous_underlying: U,
          previous_supply: S,
          global_fee_bps: step.bps,
          fee_schedule: CUTOVER - 3 * 86_400 + k * 86_400 < CUTOVER ? V0 : V3,
        })
        const w = wallets[k] as WalletInput
        const record: WalletRecord = computeWalletRecord(ctx, {
          ...w,
          address: '0x01',
          previous: previous === null ? null : walletTotalsOf(previous),
        })
        for (const [period, total] of CUMULATIVE_FIELDS) {
          sums.set(period, (sums.get(period) ?? 0n) + record[period])
          expect({ total, value: record[total] }).toEqual({ total, value: sums.get(period) })
        }
        previous = record
        U = after.underlying
        S = after.supply
      })
    },
  )

  test.prop(
    [arbRealisticReport().chain((r) => fc.tuple(fc.constant(r), arbPartition(r.supply_pre_fee, 5)))],
    { numRuns: runs(200) },
  )(
    'property: the holders fees add up to the value of the minted fee shares, within one wei per holder',
    ([report, holdings]) => {
      const ctx = prepareReport(report)
      const fees = holdings.reduce(
        (sum, shares) => sum + computeWalletRecord(ctx, wallet({ shares })).fees_eth,
        0n,
      )
      // exact: sum of shares x U (1/S0 - 1/S) over holdings summing to S0 = U x minted / S
      const minted = report.supply - report.supply_pre_fee
      const exact = new Dec((report.underlying * minted).toString()).div(report.supply.toString())
      expect(toDec(fees).minus(exact).abs().lt(holdings.length)).toBe(true)
    },
  )

  test.prop(
    [
      arbRealisticReport().chain((r) =>
        fc.tuple(
          fc.constant(r),
          fc
            .array(fc.integer({ min: 0, max: 50 }), { minLength: 2, maxLength: 8 })
            .chain((ids) => fc.tuple(...ids.map((id) => arbWallet(r.supply_pre_fee, id)))),
        ),
      ),
    ],
    { numRuns: runs(150) },
  )('property: records never depend on the order of wallets', ([report, wallets]) => {
    const forward = prepareReport(report)
    const backward = prepareReport(report)
    const a = wallets.map((w) => computeWalletRecord(forward, w))
    const b = [...wallets].reverse().map((w) => computeWalletRecord(backward, w))
    expect(a).toEqual(b.reverse())
  })

  test('behavior: the collector holds its fee mint at the report (balance after) but earns nothing on it', () => {
    const report = handReport(CUTOVER)
    const ctx = prepareReport(report)
    const feeShares = report.supply - report.supply_pre_fee
    // a collector with nothing before the report: its balance is the fee mint, its rewards 0
    const fresh = computeWalletRecord(ctx, wallet({ shares: 0n, report_delta: feeShares, mints: feeShares }))
    expect(fresh.balance_lseth).toBe(feeShares)
    expect(fresh.mints_lseth).toBe(feeShares)
    expect([fresh.gross_rewards_eth, fresh.rewards_eth, fresh.fees_eth]).toEqual([0n, 0n, 0n])
    // with 100 LsETH before: the hand example's rewards on 100 LsETH, and a balance of 100 LsETH + the fee mint
    const held = computeWalletRecord(ctx, wallet({ report_delta: feeShares, mints: feeShares }))
    expect(held.balance_lseth).toBe(100n * E + feeShares)
    expect(held.gross_rewards_eth).toBe(100_000_000_000_000_000n)
    expect(held.rewards_eth).toBe(90_000_000_000_000_000n)
    // the RedeemManager's shares burned by the report: they earned it, and are gone from the balance after
    const burned = computeWalletRecord(ctx, wallet({ report_delta: -100n * E, burns: 100n * E }))
    expect(burned.balance_lseth).toBe(0n)
    expect(burned.rewards_eth).toBe(90_000_000_000_000_000n)
    expect(() => computeWalletRecord(ctx, wallet({ report_delta: -100n * E - 1n }))).toThrow(
      InvalidInputError,
    )
    expect(() => computeWalletRecord(ctx, wallet({ report_delta: 1 as unknown as bigint }))).toThrow(
      /report_delta must be a bigint/,
    )
  })

  test.prop(
    [
      arbRawReport().chain((r) =>
        fc.tuple(
          fc.constant(r),
          arbWallet(r.supply_pre_fee),
          fc.bigInt({ min: 0n, max: r.supply }),
          fc.bigInt({ min: 0n, max: r.supply_pre_fee }),
        ),
      ),
    ],
    { numRuns: runs(300) },
  )(
    "property: earning shares + report delta = balance_lseth; every other amount is the earning shares' alone",
    ([report, w, minted, burnSeed]) => {
      const ctx = prepareReport(report)
      // the report transaction mints `minted` to the wallet and burns at most what it held before
      const burned = burnSeed % (w.shares + 1n)
      const reportDelta = minted - burned
      const moved = computeWalletRecord(ctx, { ...w, report_delta: reportDelta })
      const still = computeWalletRecord(ctx, w)
      expect(moved.balance_lseth).toBe(w.shares + reportDelta)
      expect(still.balance_lseth).toBe(w.shares)
      for (const field of WALLET_AMOUNT_FIELDS) {
        if (field.startsWith('balance_')) continue
        expect({ field, value: moved[field] }).toEqual({ field, value: still[field] })
      }
    },
  )

  test.prop(
    [
      fc.tuple(fc.bigInt({ min: E, max: 10n ** 25n }), fc.integer({ min: 2, max: 6 })).chain(([supply, n]) =>
        fc.tuple(
          fc.constant(supply),
          fc.array(
            fc.record({
              step: arbStep(supply),
              // the period's own movements: before the report transaction, and in it (a fraction of the
              // fee mint to this wallet, a burn of a fraction of what it holds)
              mintBefore: fc.bigInt({ min: 0n, max: supply / 3n }),
              burnBefore: fc.integer({ min: 0, max: 100 }),
              feeShare: fc.integer({ min: 0, max: 100 }),
              burnInReport: fc.integer({ min: 0, max: 100 }),
            }),
            { minLength: n, maxLength: n },
          ),
        ),
      ),
    ],
    { numRuns: runs(150) },
  )(
    'property: over successive reports balance_k = balance_{k-1} + mints_k - burns_k, rewards on the shares before',
    ([supply, periods]) => {
      let U = supply
      let S = supply
      let previous: WalletRecord | null = null
      periods.forEach((period, k) => {
        const after = protocolStep(U, S, period.step)
        const timestamp = CUTOVER - 3 * 86_400 + k * 86_400
        const ctx = prepareReport({
          oracle_report: String(k),
          timestamp,
          underlying: after.underlying,
          supply_pre_fee: after.supplyPreFee,
          supply: after.supply,
          previous_underlying: U,
          previous_supply: S,
          global_fee_bps: period.step.bps,
          fee_schedule: timestamp < CUTOVER ? V0 : V3,
        })
        const balanceBefore: bigint = previous === null ? 0n : (previous as WalletRecord).balance_lseth
        const held = balanceBefore + period.mintBefore
        const burnBefore = (held * BigInt(period.burnBefore)) / 100n
        const shares = held - burnBefore
        const feeMint = ((after.supply - after.supplyPreFee) * BigInt(period.feeShare)) / 100n
        const burnInReport = (shares * BigInt(period.burnInReport)) / 100n
        const record: WalletRecord = computeWalletRecord(ctx, {
          address: '0x01',
          shares,
          report_delta: feeMint - burnInReport,
          mints: period.mintBefore + feeMint,
          burns: burnBefore + burnInReport,
          previous: previous === null ? null : walletTotalsOf(previous),
        })
        expect(record.balance_lseth).toBe(balanceBefore + record.mints_lseth - record.burns_lseth)
        expect(record.balance_lseth).toBe(record.total_mints_lseth - record.total_burns_lseth)
        expect(record.gross_rewards_eth).toBe(
          computeWalletRecord(ctx, { address: '0x01', shares, mints: 0n, burns: 0n, previous: null })
            .gross_rewards_eth,
        )
        previous = record
        U = after.underlying
        S = after.supply
      })
    },
  )

  test.prop(
    [arbRealisticReport().chain((r) => fc.tuple(fc.constant(r), arbPartition(r.supply_pre_fee, 5)))],
    { numRuns: runs(200) },
  )(
    "property: with the fee mint in the collector's balance the holders' balances sum to the supply after the report",
    ([report, holdings]) => {
      const ctx = prepareReport(report)
      const feeShares = report.supply - report.supply_pre_fee
      // the last holder is the collector: the report transaction mints it the fee shares
      const records = holdings.map((shares, i) =>
        computeWalletRecord(
          ctx,
          wallet({ shares, report_delta: i === holdings.length - 1 ? feeShares : 0n }),
        ),
      )
      const sum = (field: 'balance_lseth' | 'gross_rewards_eth') =>
        records.reduce((total, r) => total + r[field], 0n)
      expect(sum('balance_lseth')).toBe(report.supply)
      // the earning shares are the supply before the fee mint: the gross rewards are theirs, one floor each
      const exactGross = floorDiv(report.supply_pre_fee * ctx.gross_step.num, ctx.gross_step.den)
      expect(exactGross - sum('gross_rewards_eth') >= 0n).toBe(true)
      expect(exactGross - sum('gross_rewards_eth') < BigInt(holdings.length)).toBe(true)
    },
  )
})
