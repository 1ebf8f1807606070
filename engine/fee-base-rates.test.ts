import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { arbElFeesOnLossReport, arbRealisticReport, E } from '../fixtures/engine/arbitraries.ts'
import { runs } from '../fixtures/property-runs.ts'
import { formatDec, toDec } from './decimal.ts'
import { reportFeeBase } from './fee-base.ts'
import type { FeeModel, FeeSchedule } from './fee-schedule.ts'
import { formatUnits18 } from './units.ts'
import { computeWalletRecord, prepareReport, type ReportInput, type WalletRecord } from './wallet-record.ts'

/**
 * The rates a record prints are the exact decimals of what configures them (fee-base.ts): on a report whose fee
 * is g x its fee-bearing rewards to the chain's roundings (the floored fee mint of a realistic report, or the
 * fee charged on EL fees on a loss day), every `period_*_rate` is share x bps / 10000, `gross_protocol_fee_rate`
 * is bps / 10000 and `discount_rate` is g - target: 0.035, never 0.034999999999999999. The expected values are
 * worked out by decimal.js (80 digits), independently of the engine's bigint path, and printed as the engine
 * prints decimals (at most 18 places, trailing zeros trimmed).
 */

/** The exact decimal of share x bps / 10000, printed as every engine decimal is. */
function shareOfFee(share: string, bps: number): string {
  return formatDec(toDec(share).mul(bps).div(10_000), 18)
}

/** The period rates a record of the schedule should print: share x g, dao / lc with the platform off-platform. */
function expectedRates(schedule: FeeSchedule, bps: number, onPlatform: boolean): Record<string, string> {
  const s = schedule.shares as Record<string, string>
  const platform = s.platform as string
  const plus = (a: string, b: string) => toDec(a).plus(toDec(b)).toFixed()
  const base = {
    period_operator_fees_rate: shareOfFee(s.operators as string, bps),
    period_platform_fees_rate: onPlatform ? shareOfFee(platform, bps) : '0',
  }
  if (schedule.model === 'v0') {
    return {
      ...base,
      period_dao_fees_rate: shareOfFee(onPlatform ? (s.dao as string) : plus(s.dao as string, platform), bps),
      period_provider_fees_rate: shareOfFee(s.provider as string, bps),
      period_slashing_fees_rate: shareOfFee(s.slashing_coverage as string, bps),
      period_lc_fees_rate: '0',
      period_tech_provider_fees_rate: '0',
    }
  }
  return {
    ...base,
    period_dao_fees_rate: '0',
    period_provider_fees_rate: '0',
    period_slashing_fees_rate: '0',
    period_lc_fees_rate: shareOfFee(onPlatform ? (s.lc as string) : plus(s.lc as string, platform), bps),
    period_tech_provider_fees_rate: shareOfFee(s.tech_provider as string, bps),
  }
}

/** The period rates of a record. */
function ratesOf(record: WalletRecord): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record).filter(([field]) => /^period_\w+_rate$/.test(field)),
  ) as Record<string, string>
}

/** A report whose fee was minted on its rewards (or, on a loss day, on its EL fees), and a target within g. */
function arbDay(model: FeeModel): fc.Arbitrary<{ report: ReportInput; targetUnits: bigint }> {
  return fc
    .oneof(arbRealisticReport(model, { loss: false }), arbElFeesOnLossReport(model))
    .filter((report) => report.supply > report.supply_pre_fee)
    .chain((report) =>
      fc
        .bigInt({ min: 0n, max: (BigInt(report.global_fee_bps) * E) / 10_000n })
        .map((targetUnits) => ({ report, targetUnits })),
    )
}

describe('the printed rates of a wallet record', () => {
  for (const model of ['v0', 'v3'] as const) {
    test.prop([arbDay(model), fc.bigInt({ min: 1n, max: 10n ** 24n })], { numRuns: runs(200) })(
      `behavior: ${model} — every rate is the exact decimal of the configured fee, schedule and target`,
      ({ report, targetUnits }, shares) => {
        const ctx = prepareReport(report)
        const bps = Number(report.global_fee_bps)
        const target = formatUnits18(targetUnits)
        const wallet = { address: '0xa1', shares, mints: 0n, burns: 0n, previous: null }
        const own = computeWalletRecord(ctx, {
          ...wallet,
          account_id: 'account',
          org_id: 'org',
          on_platform: true,
          target_fee_rate: target,
        })
        const other = computeWalletRecord(ctx, { ...wallet, address: '0xa2' })
        expect(ctx.fee_of_base).toEqual({ num: BigInt(bps), den: 10_000n })
        expect(ratesOf(own)).toEqual(expectedRates(report.fee_schedule, bps, true))
        expect(ratesOf(other)).toEqual(expectedRates(report.fee_schedule, bps, false))
        const g = formatDec(toDec(bps).div(10_000), 18)
        expect(own.gross_protocol_fee_rate).toBe(g)
        expect(own.discount_rate).toBe(formatDec(toDec(g).minus(toDec(target)), 18))
        expect(other.discount_rate).toBe('0')
      },
    )
  }

  test('behavior: the V3 hand day prints lc 0.035 (0.35 of a 10 % fee), not 0.034999999999999999', () => {
    const report: ReportInput = {
      oracle_report: '1',
      timestamp: 1_777_593_600,
      underlying: 1001n * E,
      supply_pre_fee: 1000n * E,
      // the on-chain mint of 1 ETH of rewards at 10 %: floor(...), 1 wei short of 0.1 ETH
      supply: 1000n * E + 99_910_080_927_165_551n,
      previous_underlying: 1000n * E,
      previous_supply: 1000n * E,
      global_fee_bps: 1000,
      fee_schedule: {
        id: 'v3',
        model: 'v3',
        effective_from: '2026-05-01T00:00:00Z',
        shares: { lc: '0.35', tech_provider: '0.15', operators: '0.25', platform: '0.25' },
      },
    }
    const ctx = prepareReport(report)
    // the fee the mint took is short of 10 % of the gross rewards (its floor): the measured ratio is below g
    const { gross_step: gross, net_step: net } = ctx
    const fee = { num: gross.num * net.den - net.num * gross.den, den: gross.den * net.den }
    const measured = reportFeeBase(gross, fee, 1000n).fee_of_base
    expect(measured.num * 10n).toBeLessThan(measured.den)
    expect(ctx.fee_of_base).toEqual({ num: 1000n, den: 10_000n })
    const record = computeWalletRecord(ctx, {
      address: '0xa1',
      shares: 10n * E,
      mints: 0n,
      burns: 0n,
      previous: null,
      account_id: 'account',
      org_id: 'org',
      on_platform: true,
    })
    expect(record.period_lc_fees_rate).toBe('0.035')
    expect(record.period_platform_fees_rate).toBe('0.025')
    expect(record.period_tech_provider_fees_rate).toBe('0.015')
    expect(record.period_operator_fees_rate).toBe('0.025')
  })
})
