import { test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import {
  computeAccountRecord,
  computeWalletRecord,
  formatUnits18,
  parseUnits18,
  prepareReport,
  sumWalletAmounts,
} from '../engine/index.ts'
import { arbAccountWallets, E } from '../fixtures/engine/arbitraries.ts'
import { handReport, V3_CUTOVER } from '../fixtures/engine/hand-report.ts'
import { runs } from '../fixtures/property-runs.ts'
import {
  presentTotals,
  presentWalletRecord,
  recordFields,
  V0_WALLET_RECORD_FIELDS,
  V1_WALLET_RECORD_FIELDS,
} from './record-fields.ts'

describe('presentWalletRecord', () => {
  test('behavior: presents the v1 and v0 fields of the interface, in its order, amounts as decimal strings', () => {
    const v1 =
      'oracle_report, address, account_id, org_id, date, balance_lseth, rewards_eth, total_rewards_eth, conversion_rate, previous_conversion_rate, mints_lseth, total_mints_lseth, burns_lseth, total_burns_lseth, fees_eth, total_fees_eth, period_lc_fees_lseth, total_lc_fees_lseth, period_tech_provider_fees_lseth, total_tech_provider_fees_lseth, platform_fees_eth, total_platform_fees_eth, operator_fees_eth, total_operator_fees_eth'
    const v0 =
      'dao_fees_eth, total_dao_fees_eth, provider_fees_eth, total_provider_fees_eth, slashing_fees_eth, total_slashing_fees_eth, platform_fees_at_discount_rate_eth, total_platform_fees_at_discount_rate_eth, gross_protocol_fee_rate, discount_rate, gross_fees_eth, total_gross_fees_eth, gross_rewards_eth, total_gross_rewards_eth, rebate_eth, total_rebate_eth, rebate_lseth, total_rebate_lseth'
    const record = computeWalletRecord(prepareReport(handReport(V3_CUTOVER, 'hand')), {
      address: '0x00000000000000000000000000000000000000aa',
      shares: 100n * E,
      mints: 0n,
      burns: 0n,
      previous: null,
    })
    const presentedV1 = presentWalletRecord(record, 'v1')
    expect(Object.keys(presentedV1)).toEqual([...V1_WALLET_RECORD_FIELDS])
    expect(Object.keys(presentedV1).slice(0, 24)).toEqual(v1.split(', '))
    expect(presentedV1.rewards_eth).toBe('0.09')
    expect(presentedV1.balance_lseth).toBe('100')
    const presentedV0 = presentWalletRecord(record, 'v0')
    expect(Object.keys(presentedV0)).toEqual([...V0_WALLET_RECORD_FIELDS])
    for (const field of v0.split(', ')) expect(presentedV0).toHaveProperty(field)
    expect(presentedV0).not.toHaveProperty('period_lc_fees_lseth')
    expect(Object.values(presentedV0).every((value) => value === null || typeof value === 'string')).toBe(
      true,
    )
  })

  test('behavior: the v0 ETH view names every LsETH amount in ETH and leaves the rebate in LsETH out', () => {
    const eth = recordFields('v0', 'eth')
    expect(eth).toContain('total_mints_eth')
    expect(eth.some((field) => field.endsWith('_lseth'))).toBe(false)
    expect(() => recordFields('v1', 'eth')).toThrow(/only v0 records have an ETH view/)
  })
})

describe('presentTotals', () => {
  test.prop([arbAccountWallets], { numRuns: runs(30) })(
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
