import { describe, expect, test } from 'vitest'
import { computeProtocolRecord } from '../engine/index.ts'
import { presentProtocolRecord } from './protocol-presentation.ts'

describe('presentProtocolRecord', () => {
  test('behavior: amounts as decimal strings, the keys count as an integer, a_srr_7d null while not known', () => {
    const record = computeProtocolRecord({
      oracle_report: '1',
      timestamp: 1_777_593_600 + 12 * 3600,
      rewards: 0n,
      global_fee_bps: 1000,
      fee_shares_minted: 0n,
      underlying: 1n,
      supply: 4n * 10n ** 17n,
      mints_lseth: 0n,
      burns_lseth: 0n,
      validators_count: 1,
      stopped_validator_count_per_operator: [],
      previous_reports: [],
    })
    expect(presentProtocolRecord(record)).toMatchObject({
      a_srr_7d: null,
      total_lseth_supply: '0.4',
      total_protocol_active_keys_count: 1,
      conversion_rate: '0.000000000000000002',
    })
  })
})
