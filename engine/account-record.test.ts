import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { arbRealisticReport, arbWallet } from '../fixtures/engine/arbitraries.ts'
import { computeAccountRecord, presentTotals, sumWalletAmounts, zeroWalletAmounts } from './account-record.ts'
import { InvalidInputError } from './errors.ts'
import { formatUnits18, parseUnits18 } from './units.ts'
import type { WalletRecord } from './wallet-record.ts'
import { computeWalletRecord, prepareReport, WALLET_AMOUNT_FIELDS } from './wallet-record.ts'

const arbAccountWallets = arbRealisticReport().chain((report) =>
  fc
    .array(fc.integer({ min: 0, max: 1000 }), { minLength: 0, maxLength: 6 })
    .chain((ids) => fc.tuple(...ids.map((id) => arbWallet(report.supply_pre_fee / 6n, id))))
    .map((wallets) => {
      const ctx = prepareReport(report)
      return wallets.map((w, i) =>
        computeWalletRecord(ctx, {
          ...w,
          address: `0x${i.toString(16).padStart(40, '0')}`,
          account_id: 'acc-1',
          org_id: 'org_a',
        }),
      )
    }),
)

describe('computeAccountRecord', () => {
  test.prop(
    [
      arbAccountWallets.chain((records) =>
        fc.tuple(
          fc.constant(records),
          fc.shuffledSubarray(records, { minLength: records.length, maxLength: records.length }),
        ),
      ),
    ],
    { numRuns: 150 },
  )('property: account totals equal the sum of the wallet records, in any order', ([records, shuffled]) => {
    const date = records[0]?.date ?? '2026-05-01'
    const account = computeAccountRecord('acc-1', date, records)
    for (const field of WALLET_AMOUNT_FIELDS) {
      expect(account.totals[field]).toBe(records.reduce((sum, record) => sum + record[field], 0n))
    }
    expect(computeAccountRecord('acc-1', date, shuffled).totals).toEqual(account.totals)
  })

  test('behavior: an account without wallets has zero totals; records of another date or account are refused', () => {
    expect(computeAccountRecord('acc-1', '2026-05-01', []).totals).toEqual(zeroWalletAmounts())
    const record = { date: '2026-05-02', account_id: 'acc-1', address: '0x1' } as WalletRecord
    expect(() => computeAccountRecord('acc-1', '2026-05-01', [record])).toThrow(InvalidInputError)
    expect(() => computeAccountRecord('acc-2', '2026-05-02', [record])).toThrow(InvalidInputError)
  })

  test.prop([arbAccountWallets], { numRuns: 30 })(
    'behavior: presents totals as strings of the version; a part of no summed model is null',
    (records) => {
      const date = records[0]?.date ?? '2026-05-01'
      const totals = computeAccountRecord('acc-1', date, records).totals
      const v1 = presentTotals(totals, 'v1', 'lseth', new Set(['v3']))
      expect(Object.keys(v1).slice(0, 2)).toEqual(['balance_lseth', 'rewards_eth'])
      expect(v1.dao_fees_eth).toBeNull()
      expect(v1.total_dao_fees_eth).toBe(formatUnits18(totals.total_dao_fees_eth))
      expect(v1.lc_fees_eth).toBe(formatUnits18(totals.lc_fees_eth))
      const v0 = presentTotals(totals, 'v0', 'lseth', new Set(['v0']))
      expect(v0.rebate_eth).toBe(formatUnits18(totals.rebate_eth))
      expect(v0.lc_fees_eth).toBeNull()
      const both = presentTotals(totals, 'v0', 'lseth', new Set(['v0', 'v3']))
      expect(both.lc_fees_eth).toBe(formatUnits18(totals.lc_fees_eth))
      expect(both.dao_fees_eth).toBe(formatUnits18(totals.dao_fees_eth))
      const eth = presentTotals(totals, 'v0', 'eth', new Set(['v0']))
      expect(eth).not.toHaveProperty('balance_lseth')
      expect(eth).not.toHaveProperty('rebate_lseth')
      expect(eth.total_mints_eth).toBe(formatUnits18(totals.total_mints_eth))
      expect(parseUnits18(v1.balance_lseth as string)).toBe(sumWalletAmounts(records).balance_lseth)
    },
  )
})
