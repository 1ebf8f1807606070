import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import { FeeScheduleError } from './errors.ts'
import type { FeeSchedule } from './fee-schedule.ts'
import {
  feeModelAt,
  parseFeeSchedule,
  parseFeeSchedules,
  selectFeeSchedule,
  V3_CUTOVER_ISO,
  V3_CUTOVER_TIMESTAMP,
} from './fee-schedule.ts'

const v0 = {
  id: 'v0-a',
  model: 'v0',
  effective_from: '2022-01-01T00:00:00Z',
  shares: { dao: '0.2', provider: '0.15', slashing_coverage: '0.1', operators: '0.3', platform: '0.25' },
}
const v3 = {
  id: 'v3-a',
  model: 'v3',
  effective_from: V3_CUTOVER_ISO,
  shares: { lc: '0.4', tech_provider: '0.1', operators: '0.25', platform: '0.25' },
}

describe('feeModelAt', () => {
  test('behavior: v0 before 2026-05-01T00:00:00Z, V3 from that instant', () => {
    expect(V3_CUTOVER_TIMESTAMP).toBe(Date.parse(V3_CUTOVER_ISO) / 1000)
    expect(feeModelAt(V3_CUTOVER_TIMESTAMP - 1)).toBe('v0')
    expect(feeModelAt(V3_CUTOVER_TIMESTAMP)).toBe('v3')
  })
})

describe('parseFeeSchedule', () => {
  test('behavior: accepts valid rows of both models', () => {
    expect(parseFeeSchedule(v0)).toEqual(v0)
    expect(parseFeeSchedule({ ...v3, note: 'x' })).toEqual({ ...v3, note: 'x' })
    expect(parseFeeSchedule({ ...v3, shares: { ...v3.shares, lc: '0.400000000000000000' } }).model).toBe('v3')
  })

  test('behavior: rejects rows that do not sum to exactly 1 or have the wrong parts', () => {
    const bad: unknown[] = [
      null,
      { ...v0, id: '' },
      { ...v0, model: 'v2' },
      { ...v0, shares: { ...v0.shares, dao: '0.2000000000000000001' } },
      { ...v0, shares: { ...v0.shares, dao: '0.21' } },
      { ...v0, shares: { ...v0.shares, dao: '-0.2', platform: '0.65' } },
      { ...v0, shares: { ...v0.shares, dao: 0.2 } },
      { ...v0, shares: { ...v0.shares, lc: '0' } },
      { ...v3, shares: { lc: '0.75', operators: '0.25' } },
      { ...v3, shares: { lc: '1.5', tech_provider: '-0.5', operators: '0', platform: '0' } },
      { ...v0, effective_from: V3_CUTOVER_ISO },
      { ...v3, effective_from: '2026-04-30T23:59:59Z' },
      { ...v0, effective_from: '2022-01-01' },
    ]
    for (const row of bad) expect(() => parseFeeSchedule(row), JSON.stringify(row)).toThrow(FeeScheduleError)
  })
})

describe('parseFeeSchedules', () => {
  test('behavior: the seed file fixtures/fee-schedules.json is valid and covers both eras', () => {
    const seed = parseFeeSchedules(
      JSON.parse(readFileSync(new URL('../fixtures/fee-schedules.json', import.meta.url), 'utf8')),
    )
    expect(selectFeeSchedule(seed, 1_665_000_000).model).toBe('v0')
    expect(selectFeeSchedule(seed, V3_CUTOVER_TIMESTAMP - 1).model).toBe('v0')
    expect(selectFeeSchedule(seed, V3_CUTOVER_TIMESTAMP).model).toBe('v3')
  })

  test('behavior: rejects duplicate ids and two rows of a model at one instant; sorts by effective_from', () => {
    expect(() => parseFeeSchedules([v0, v0])).toThrow(FeeScheduleError)
    expect(() => parseFeeSchedules([v0, { ...v0, id: 'other' }])).toThrow(FeeScheduleError)
    expect(() => parseFeeSchedules('nope')).toThrow(FeeScheduleError)
    expect(parseFeeSchedules({ schedules: [v3, v0] }).map((row) => row.id)).toEqual(['v0-a', 'v3-a'])
  })
})

describe('selectFeeSchedule', () => {
  test('behavior: picks the latest row of the era in force at the block time', () => {
    const later: FeeSchedule = parseFeeSchedule({ ...v0, id: 'v0-b', effective_from: '2025-01-01T00:00:00Z' })
    const schedules = parseFeeSchedules([v0, v3, later])
    expect(selectFeeSchedule(schedules, 1_735_689_599).id).toBe('v0-a')
    expect(selectFeeSchedule(schedules, 1_735_689_600).id).toBe('v0-b')
    expect(selectFeeSchedule(schedules, V3_CUTOVER_TIMESTAMP + 10).id).toBe('v3-a')
    expect(() => selectFeeSchedule([parseFeeSchedule(v0)], V3_CUTOVER_TIMESTAMP)).toThrow(
      /no v3 fee schedule/,
    )
    expect(() => selectFeeSchedule([later], 1_700_000_000)).toThrow(FeeScheduleError)
  })
})
