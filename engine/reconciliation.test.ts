import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { arbPartition, arbRealisticReport } from '../fixtures/engine/arbitraries.ts'
import { runs } from '../fixtures/property-runs.ts'
import { reconcileReport } from './reconciliation.ts'
import { computeWalletRecord, prepareReport, type ReportInput } from './wallet-record.ts'

/** Every holder's record of a report, summed, and the protocol's side of it. */
function totals(report: ReportInput, balances: bigint[], burned = 0n) {
  const minted = report.supply - report.supply_pre_fee
  // the withdrawal event burns `burned` shares after the fee mint, paying floor(shares x rate)
  const paid = (burned * report.underlying) / report.supply
  const after: ReportInput = {
    ...report,
    underlying_at_fee_mint: report.underlying,
    underlying: report.underlying - paid,
    supply: report.supply - burned,
  }
  const ctx = prepareReport(after)
  const records = balances.map((shares, i) =>
    computeWalletRecord(ctx, { address: `0x${i}`, shares, mints: 0n, burns: 0n, previous: null }),
  )
  return {
    ctx,
    holders: {
      holders: records.length,
      shares: records.reduce((s, r) => s + r.balance_lseth, 0n),
      gross_rewards: records.reduce((s, r) => s + r.gross_rewards_eth, 0n),
      fees: records.reduce((s, r) => s + r.fees_eth, 0n),
    },
    protocol: {
      supply_before: report.supply_pre_fee,
      fee_shares: minted,
      supply_after_fee_mint: report.supply,
      reported_increase: 0n,
    },
  }
}

describe('reconcileReport', () => {
  test.prop(
    [
      arbRealisticReport().chain((r) =>
        fc.tuple(
          fc.constant(r),
          arbPartition(r.supply_pre_fee, 7),
          fc.bigInt({ min: 0n, max: r.supply / 100n }),
        ),
      ),
    ],
    { numRuns: runs(300) },
  )(
    'property: the records of every holder reconcile with the report (with or without a burn after the mint)',
    ([report, balances, burned]) => {
      // without a fee mint there is no RewardsEarned: the day reads the block-end pool alone (no burn to model)
      const minted = report.supply - report.supply_pre_fee
      const { ctx, holders, protocol } = totals(report, balances, minted > 0n ? burned : 0n)
      const result = reconcileReport(ctx, holders, protocol)
      expect(result.violations).toEqual([])
      expect(result.shares_residual).toBe(0n)
      expect(result.gross_residual >= 0n && result.gross_residual <= 7n).toBe(true)
    },
  )

  test.prop(
    [arbRealisticReport().chain((r) => fc.tuple(fc.constant(r), arbPartition(r.supply_pre_fee, 4)))],
    {
      numRuns: runs(100),
    },
  )(
    'property: a holder missing or a balance changed by one share breaks the reconciliation',
    ([report, balances]) => {
      const { ctx, holders, protocol } = totals(report, balances)
      expect(
        reconcileReport(ctx, { ...holders, shares: holders.shares + 1n }, protocol).violations,
      ).not.toEqual([])
      const gross = reconcileReport(ctx, { ...holders, gross_rewards: holders.gross_rewards + 1n }, protocol)
      if (holders.gross_rewards > 0n) expect(gross.gross_residual).toBeLessThan(5n)
    },
  )

  test('behavior: a wallet whose gross rewards are off by more than the holders count fails', () => {
    const report = prepareReport({
      oracle_report: '1',
      timestamp: 1_777_593_600,
      underlying: 1001n * 10n ** 18n,
      supply_pre_fee: 1000n * 10n ** 18n,
      supply: 1000n * 10n ** 18n,
      previous_underlying: 1000n * 10n ** 18n,
      previous_supply: 1000n * 10n ** 18n,
      global_fee_bps: 0,
      fee_schedule: {
        id: 'v3',
        model: 'v3',
        effective_from: '2026-05-01T00:00:00Z',
        shares: { lc: '1', tech_provider: '0', operators: '0', platform: '0' },
      },
    })
    const protocol = {
      supply_before: 1000n * 10n ** 18n,
      fee_shares: 0n,
      supply_after_fee_mint: 0n,
      reported_increase: 10n ** 18n,
    }
    const ok = reconcileReport(
      report,
      { holders: 1, shares: 1000n * 10n ** 18n, gross_rewards: 10n ** 18n, fees: 0n },
      protocol,
    )
    expect(ok.violations).toEqual([])
    expect(ok.rewards_residual).toBe(0n)
    const off = reconcileReport(
      report,
      { holders: 1, shares: 1000n * 10n ** 18n, gross_rewards: 10n ** 18n - 5n, fees: 0n },
      protocol,
    )
    expect(off.violations[0]).toMatch(/gross rewards are 5 wei off/)
  })
})
