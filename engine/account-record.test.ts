import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { arbAccountWallets } from '../fixtures/engine/arbitraries.ts'
import { runs } from '../fixtures/property-runs.ts'
import { computeAccountRecord, zeroWalletAmounts } from './account-record.ts'
import { InvalidInputError } from './errors.ts'
import type { WalletRecord } from './wallet-record.ts'
import { WALLET_AMOUNT_FIELDS } from './wallet-record.ts'

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
    { numRuns: runs(150) },
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
})
