import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { arbElFeesOnLossReport, arbRealisticReport, arbWallet } from '../fixtures/engine/arbitraries.ts'
import { runs } from '../fixtures/property-runs.ts'
import { toDec } from './decimal.ts'
import { InvalidInputError } from './errors.ts'
import type { FeeModel } from './fee-schedule.ts'
import type { FeeSummaryItem } from './fee-totals.ts'
import {
  decodeFeeSummary,
  encodeFeeSummary,
  FEE_TOTAL_FIELDS,
  feeTotalsRows,
  mergeFeeSummaries,
  operatorFeeRows,
  summarizeFees,
} from './fee-totals.ts'
import type { ReportInput } from './wallet-record.ts'
import { computeWalletRecord, prepareReport } from './wallet-record.ts'

/** Items of one report (a realistic one, or a River 1.x loss day with EL fees) and the report's context. */
const arbDay = (report: fc.Arbitrary<ReportInput>) =>
  report.chain((input) =>
    fc
      .array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 10 })
      .chain((ids) =>
        fc.tuple(
          ...ids.map((id) =>
            arbWallet(input.supply_pre_fee / 10n, id).map((w) => ({
              ...w,
              on_platform: w.org_id !== undefined,
            })),
          ),
        ),
      )
      .map((wallets) => {
        const ctx = prepareReport(input)
        return {
          ctx,
          items: wallets.map(
            (w): FeeSummaryItem => ({ record: computeWalletRecord(ctx, w), originator_org_id: 'org_o' }),
          ),
        }
      }),
  )

const arbItems = arbRealisticReport().chain((report) =>
  fc
    .array(fc.integer({ min: 0, max: 40 }), { minLength: 0, maxLength: 10 })
    .chain((ids) =>
      fc.tuple(
        ...ids.map((id) =>
          fc.tuple(arbWallet(report.supply_pre_fee / 10n, id), fc.constantFrom(null, 'org_x', 'org_y')),
        ),
      ),
    )
    .map((pairs) => {
      const ctx = prepareReport(report)
      return pairs.map(
        ([wallet, originator]): FeeSummaryItem => ({
          record: computeWalletRecord(ctx, wallet),
          originator_org_id: originator,
        }),
      )
    }),
)

describe('summarizeFees', () => {
  test.prop(
    [
      arbItems.chain((items) =>
        fc.tuple(
          fc.constant(items),
          fc.nat({ max: items.length }),
          fc.shuffledSubarray(items, { minLength: items.length, maxLength: items.length }),
        ),
      ),
    ],
    {
      numRuns: runs(150),
    },
  )(
    'property: merged shard summaries equal the summary of the whole day, in any order',
    ([items, cut, shuffled]) => {
      const whole = summarizeFees(items)
      const merged = mergeFeeSummaries(
        summarizeFees(shuffled.slice(cut)),
        summarizeFees(shuffled.slice(0, cut)),
      )
      expect(merged).toEqual(whole)
      expect(decodeFeeSummary(JSON.parse(JSON.stringify(encodeFeeSummary(whole))))).toEqual(whole)
      for (const field of FEE_TOTAL_FIELDS) {
        expect(whole.all[field]).toBe(items.reduce((sum, item) => sum + item.record[field], 0n))
      }
      // every platform fee belongs to some platform org
      const byPlatforms = Object.values(whole.platforms).reduce((sum, t) => sum + t.platform_fees_eth, 0n)
      expect(byPlatforms).toBe(whole.all.platform_fees_eth)
    },
  )

  test('behavior: every fee total field is summed, each apart from the others', () => {
    FEE_TOTAL_FIELDS.forEach((field, i) => {
      const record = Object.fromEntries(FEE_TOTAL_FIELDS.map((f) => [f, f === field ? BigInt(i + 2) : 0n]))
      const item = {
        record: { ...record, on_platform: true, org_id: 'org_p' },
        originator_org_id: 'org_o',
      } as FeeSummaryItem
      const summary = summarizeFees([item, item])
      for (const totals of [summary.all, summary.platforms.org_p, summary.originators.org_o]) {
        for (const f of FEE_TOTAL_FIELDS) expect(totals?.[f], f).toBe(f === field ? BigInt(2 * (i + 2)) : 0n)
        expect(totals?.wallets).toBe(2)
      }
    })
  })

  test('behavior: malformed encoded totals are refused', () => {
    const encoded = encodeFeeSummary(summarizeFees([]))
    expect(() => decodeFeeSummary({ ...encoded, all: { ...encoded.all, fees_eth: '1.5' } })).toThrow(
      InvalidInputError,
    )
    expect(() => decodeFeeSummary({ ...encoded, all: { ...encoded.all, wallets: '1' } })).toThrow(
      InvalidInputError,
    )
  })
})

describe('feeTotalsRows', () => {
  test.prop([arbItems], { numRuns: runs(50) })(
    'behavior: rows are sorted by org, with part / gross rates',
    (items) => {
      const summary = summarizeFees(items)
      const rows = feeTotalsRows(summary.platforms)
      expect(rows.map((row) => row.org_id)).toEqual(Object.keys(summary.platforms).sort())
      for (const row of rows) {
        if (row.gross_rewards_eth <= 0n) expect(row.platform_fees_rate).toBe('0')
        else expect(row.platform_fees_rate.startsWith('-')).toBe(false)
      }
    },
  )
})

describe('feeTotalsRows and operatorFeeRows on a fee charged beyond the gross rewards', () => {
  test.prop([arbDay(arbRealisticReport())], { numRuns: runs(50) })(
    'property: with the report of an ordinary day, the rates are those without it (part / gross)',
    ({ ctx, items }) => {
      expect(ctx.fee_base).toBe('gross')
      const summary = summarizeFees(items)
      expect(feeTotalsRows(summary.platforms, ctx)).toEqual(feeTotalsRows(summary.platforms))
      expect(operatorFeeRows(summary.all, [{ operator_id: '0', active_validators: 3 }], ctx)).toEqual(
        operatorFeeRows(summary.all, [{ operator_id: '0', active_validators: 3 }]),
      )
    },
  )

  for (const model of ['v0', 'v3'] as const satisfies readonly FeeModel[]) {
    test.prop([arbDay(arbElFeesOnLossReport(model))], { numRuns: runs(50) })(
      `property: ${model} loss days with EL fees: each group rate x its fees / g gives its part; the rates sum to g`,
      ({ ctx, items }) => {
        const summary = summarizeFees(items)
        const g = toDec(ctx.global_fee_bps).div(10_000)
        const groups = [...feeTotalsRows(summary.platforms, ctx), ...feeTotalsRows(summary.originators, ctx)]
        for (const row of groups) {
          if (ctx.fee_base !== 'charged' || row.fees_eth === 0n) continue
          const base = toDec(row.fees_eth).div(g)
          const pairs: [string, bigint][] = [
            [row.platform_fees_rate, row.platform_fees_eth],
            [row.operator_fees_rate, row.operator_fees_eth],
            [row.rebate_rate, row.rebate_eth],
            [row.platform_fees_at_discount_rate_rate, row.platform_fees_at_discount_rate_eth],
            [row.lc_fees_rate, row.lc_fees_eth],
            [row.tech_provider_fees_rate, row.tech_provider_fees_eth],
          ]
          for (const [rate, part] of pairs) {
            // rate = part / base rounded down at 18 digits
            const miss = toDec(part).minus(base.mul(rate))
            expect(miss.gte(0) && miss.lte(base.mul('1e-18'))).toBe(true)
          }
          if (model === 'v3' && row.org_id === 'org_o') {
            // every V3 part of the group: lc + tech + operators + platform = fee = g x base
            const sum = [
              row.lc_fees_rate,
              row.tech_provider_fees_rate,
              row.operator_fees_rate,
              row.platform_fees_rate,
            ].reduce((a, b) => a.plus(b), toDec(0n))
            expect(g.minus(sum).gte(0) && g.minus(sum).lte('4e-18')).toBe(true)
          }
        }
        const { operators } = operatorFeeRows(summary.all, [{ operator_id: '0', active_validators: 1 }], ctx)
        if (ctx.fee_base === 'charged' && summary.all.fees_eth > 0n) {
          const base = toDec(summary.all.fees_eth).div(g)
          const miss = toDec(summary.all.operator_fees_eth).minus(
            base.mul(operators[0]?.operator_fees_rate ?? '0'),
          )
          expect(miss.gte(0) && miss.lte(base.mul('1e-18'))).toBe(true)
        }
      },
    )
  }
})

describe('operatorFeeRows', () => {
  test.prop([arbItems], { numRuns: runs(50) })(
    'property: operator rows sum to the operator fees of the day',
    (items) => {
      const summary = summarizeFees(items)
      const { operators, unallocated_eth } = operatorFeeRows(summary.all, [
        { operator_id: '0', active_validators: 120 },
        { operator_id: '1', active_validators: 80 },
        { operator_id: '2', active_validators: 0 },
      ])
      expect(operators.reduce((sum, o) => sum + o.operator_fees_eth, 0n) + unallocated_eth).toBe(
        summary.all.operator_fees_eth,
      )
      expect(operators[2]?.operator_fees_eth).toBe(0n)
    },
  )
})
