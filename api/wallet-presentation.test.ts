import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import type { WalletRecordRow } from '../db/repos/reports.ts'
import { formatUnits18, isOtherModelField, WALLET_AMOUNT_FIELDS } from '../engine/index.ts'
import { presentWalletRecord } from './record-fields.ts'
import {
  asSeenBy,
  formatStoredUnits18,
  presentStoredWallet,
  WITHHELD_FROM_OTHERS,
  walletRecordOf,
} from './wallet-presentation.ts'

/** Amounts as Postgres prints numeric(78,0): no leading zeros, '-' for negatives. */
const amount = fc
  .oneof(
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
    fc.bigInt({ min: -1000n, max: 1000n }),
    fc.constantFrom(0n, 10n ** 18n, -(10n ** 18n), 10n ** 18n + 1n, 10n ** 77n - 1n),
  )
  .map(String)

const ORGS = ['org_a', 'org_b', null] as const

const row = fc.record({
  amounts: fc.array(amount, {
    minLength: WALLET_AMOUNT_FIELDS.length,
    maxLength: WALLET_AMOUNT_FIELDS.length,
  }),
  org: fc.constantFrom(...ORGS),
  rate: fc.constantFrom('0', '0.05', '0.1'),
  model: fc.constantFrom('v0' as const, 'v3' as const),
})

function storedRow(r: {
  amounts: string[]
  org: string | null
  rate: string
  model: 'v0' | 'v3'
}): WalletRecordRow {
  const base: Record<string, unknown> = {
    report_epoch: '400450',
    address: '0x819779164c0c23f0ced42926c140e01aaaf9e40d',
    date: '2026-05-03',
    account_id: r.org ? '5b0c7d0e-8f52-4a7e-9a57-4f6e2b9d1c11' : null,
    org_id: r.org,
    originator_org_id: r.org,
    on_platform: r.org !== null,
    target_fee_rate: r.org ? r.rate : null,
    fee_model: r.model,
    fee_schedule_id: 'fs_1',
    conversion_rate: '1.000162737844012569',
    previous_conversion_rate: '1.000081',
    gross_protocol_fee_rate: '0.1',
    discount_rate: r.org ? r.rate : '0',
    engine_version: '1',
    period_dao_fees_rate: '0',
    period_provider_fees_rate: '0',
    period_slashing_fees_rate: '0',
    period_lc_fees_rate: '0.0125',
    period_tech_provider_fees_rate: '0.0125',
    period_operator_fees_rate: '0.05',
    period_platform_fees_rate: '0.025',
  }
  WALLET_AMOUNT_FIELDS.forEach((field, i) => {
    base[field] = r.amounts[i]
  })
  return base as WalletRecordRow
}

describe('formatStoredUnits18', () => {
  test.prop([amount])('behavior: equals formatUnits18 of the bigint', (value) => {
    expect(formatStoredUnits18(value)).toBe(formatUnits18(BigInt(value)))
  })
})

const views = fc.constantFrom(['v0', 'lseth'] as const, ['v1', 'lseth'] as const, ['v0', 'eth'] as const)

describe('presentStoredWallet', () => {
  test.prop([row, fc.constantFrom('org_a', 'org_b'), views])(
    'behavior: equals the engine path (walletRecordOf, presentWalletRecord, asSeenBy) for every reader and view',
    (r, reader, [version, unit]) => {
      const stored = storedRow(r)
      expect(presentStoredWallet(stored, reader, version, unit)).toEqual(
        asSeenBy(presentWalletRecord(walletRecordOf(stored), version, unit), stored, reader),
      )
    },
  )

  test.prop([row, fc.constantFrom('org_a', 'org_b'), views])(
    "behavior: the other model's period parts and, on another's wallet, the withheld fields are null; nothing else",
    (r, reader, [version, unit]) => {
      const stored = storedRow(r)
      const presented = presentStoredWallet(stored, reader, version, unit)
      const own = stored.org_id === reader
      for (const [field, value] of Object.entries(presented)) {
        const hidden = isOtherModelField(field, r.model) || (!own && WITHHELD_FROM_OTHERS.has(field))
        if (hidden) expect(value, field).toBeNull()
        else if (field !== 'account_id' && field !== 'org_id' && field !== 'target_fee_rate')
          expect(value, field).not.toBeNull()
      }
      expect(presented.fee_model).toBe(r.model)
    },
  )
})
