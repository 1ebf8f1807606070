import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { arbRawReport, arbRealisticReport, arbTarget, arbWallet, E } from '../fixtures/engine/arbitraries.ts'
import { handReport, V3_CUTOVER } from '../fixtures/engine/hand-report.ts'
import { runs } from '../fixtures/property-runs.ts'
import {
  computeDormantAmounts,
  DORMANT_AMOUNT_FIELDS,
  DORMANT_ZERO_FIELDS,
  prepareDormantClass,
} from './dormant-record.ts'
import {
  CUMULATIVE_FIELDS,
  computeWalletRecord,
  prepareReport,
  type ReportInput,
  WALLET_AMOUNT_FIELDS,
  type WalletTotals,
  walletTotalsOf,
} from './wallet-record.ts'

/** A wallet that moved nothing: its record by the engine's definition, and by the dormant path. */
function bothPaths(
  report: ReportInput,
  balance: bigint,
  onPlatform: boolean,
  target: string | null,
  previous: WalletTotals | null,
) {
  const ctx = prepareReport(report)
  const record = computeWalletRecord(ctx, {
    address: '0x00000000000000000000000000000000000000aa',
    shares: balance,
    mints: 0n,
    burns: 0n,
    report_delta: 0n,
    previous,
    account_id: 'acc-1',
    org_id: 'org_a',
    on_platform: onPlatform,
    target_fee_rate: target,
  })
  const amounts = computeDormantAmounts(ctx, prepareDormantClass(ctx, onPlatform, target), balance)
  return { record, amounts }
}

const arbBalance = (max: bigint) =>
  fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 1000n }), fc.bigInt({ min: 0n, max }))

describe('computeDormantAmounts', () => {
  test('behavior: the dormant fields, the always-zero fields and the totals cover every amount of a record', () => {
    const totals = CUMULATIVE_FIELDS.map(([, total]) => total)
    const covered = [...DORMANT_AMOUNT_FIELDS, ...DORMANT_ZERO_FIELDS, ...totals]
    expect(new Set(covered).size).toBe(covered.length)
    expect([...covered].sort()).toEqual([...WALLET_AMOUNT_FIELDS].sort())
  })

  test.prop(
    [
      fc
        .oneof(arbRawReport(), arbRealisticReport(), arbRealisticReport(undefined, { loss: true }))
        .chain((r) =>
          fc.tuple(
            fc.constant(r),
            arbBalance(r.supply_pre_fee),
            fc.boolean(),
            arbTarget,
            fc.option(arbWallet(r.supply_pre_fee, 1)),
          ),
        ),
    ],
    { numRuns: runs(400) },
  )(
    'property: a wallet that moved nothing gets from the dormant path the record computeWalletRecord gives it, to the wei',
    ([report, balance, onPlatform, target, earlier]) => {
      // the previous totals: some earlier record of the wallet (any amounts), or none
      const previous =
        earlier === null ? null : walletTotalsOf(computeWalletRecord(prepareReport(report), earlier))
      const { record, amounts } = bothPaths(report, balance, onPlatform, target, previous)
      for (const field of DORMANT_AMOUNT_FIELDS) {
        expect({ field, value: amounts[field] }).toEqual({ field, value: record[field] })
      }
      for (const field of DORMANT_ZERO_FIELDS)
        expect({ field, value: record[field] }).toEqual({ field, value: 0n })
      // totals: the previous total plus the period amount (zero for the fields a dormant wallet cannot move)
      const period = amounts as unknown as Record<string, bigint>
      for (const [field, total] of CUMULATIVE_FIELDS) {
        const expected = (previous?.[total] ?? 0n) + (period[field] ?? 0n)
        expect({ total, value: record[total] }).toEqual({ total, value: expected })
      }
    },
  )

  test('behavior: the hand-checked report (1000 ETH at rate 1 earn 1 ETH, 10 % fee): 100 LsETH earn 0.1 ETH gross, both models', () => {
    for (const timestamp of [V3_CUTOVER - 1, V3_CUTOVER]) {
      const { record, amounts } = bothPaths(handReport(timestamp, 'hand'), 100n * E, true, '0.08', null)
      expect(amounts.gross_rewards_eth).toBe(E / 10n)
      expect(amounts.fees_eth).toBe(record.fees_eth)
      expect(amounts.platform_fees_eth).toBeGreaterThan(0n)
      expect(amounts.rebate_eth).toBe(record.rebate_eth)
      expect(amounts.rebate_eth).toBeGreaterThan(0n)
    }
  })
})
