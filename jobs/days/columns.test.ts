import { describe, expect, test } from 'vitest'
import {
  FEE_AMOUNT_COLUMNS,
  WALLET_AMOUNT_COLUMNS,
  WALLET_RATE_COLUMNS,
  WALLET_RECORD_COLUMNS,
} from '../../db/records/columns.ts'
import { FEE_TOTAL_FIELDS, WALLET_AMOUNT_FIELDS } from '../../engine/index.ts'

/** db/ cannot import engine/: its column lists mirror the engine's record fields, and this holds them equal. */
describe('record columns', () => {
  test('behavior: the wallet amount columns are the engine amount fields, in order', () => {
    expect([...WALLET_AMOUNT_COLUMNS]).toEqual([...WALLET_AMOUNT_FIELDS])
  })

  test('behavior: the fee record amount columns are the engine fee total fields, in order', () => {
    expect([...FEE_AMOUNT_COLUMNS]).toEqual([...FEE_TOTAL_FIELDS])
  })

  test('behavior: every rate of a wallet record has a column', () => {
    for (const rate of WALLET_RATE_COLUMNS) expect(WALLET_RECORD_COLUMNS).toContain(rate)
  })
})
