import { describe, expect, test } from 'vitest'
import { CUMULATIVE_FIELDS, WALLET_AMOUNT_FIELDS, WALLET_RATE_FIELDS } from '../fields/record-fields.ts'
import { V0_ONLY_FIELDS, V3_ONLY_FIELDS } from './fee-model-fields.ts'
import { FIELD_KINDS, kindOf, RATE_NUMERATORS } from './field-kinds.ts'

/** The field names of a wallet record as computed (every key of the engine's record). */
const RECORD_KEYS = [
  'oracle_report',
  'address',
  'account_id',
  'org_id',
  'date',
  'fee_model',
  'fee_schedule_id',
  'on_platform',
  'target_fee_rate',
  'conversion_rate',
  'previous_conversion_rate',
  'gross_protocol_fee_rate',
  'discount_rate',
  ...WALLET_AMOUNT_FIELDS,
  ...WALLET_RATE_FIELDS,
]

describe('FIELD_KINDS', () => {
  test('behavior: every field of the wallet record has a kind', () => {
    for (const field of RECORD_KEYS) expect(kindOf(field), field).toBeDefined()
    for (const field of [...V0_ONLY_FIELDS, ...V3_ONLY_FIELDS].filter(
      (f) => !f.endsWith('_rate') || f.startsWith('period_'),
    )) {
      expect(kindOf(field), field).toBeDefined()
    }
  })

  test('behavior: period amounts are flows, balances, conversion rates and running totals are stocks', () => {
    for (const [period, total] of CUMULATIVE_FIELDS) {
      expect(kindOf(period)).toBe('flow')
      expect(kindOf(total)).toBe('stock')
    }
    for (const field of ['balance_lseth', 'balance_eth', 'conversion_rate', 'previous_conversion_rate']) {
      expect(kindOf(field)).toBe('stock')
    }
  })

  test('behavior: every rate is derived from a flow', () => {
    for (const [rate, part] of Object.entries(RATE_NUMERATORS)) {
      expect(kindOf(rate)).toBe('rate')
      expect(kindOf(part)).toBe('flow')
    }
    expect(
      [...FIELD_KINDS]
        .filter(([, kind]) => kind === 'rate')
        .map(([f]) => f)
        .sort(),
    ).toEqual(Object.keys(RATE_NUMERATORS).sort())
  })
})
