import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { arbRealisticReport, arbWallet } from '../fixtures/engine/arbitraries.ts'
import { runs } from '../fixtures/property-runs.ts'
import { InvalidInputError } from './errors.ts'
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
import { computeWalletRecord, prepareReport } from './wallet-record.ts'

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
