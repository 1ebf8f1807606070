import { describe, expect, test } from 'vitest'
import type { SigningKeyRow } from '../../db/repos/index.ts'
import { keyStates, RETIREMENT_GRACE_SECONDS, statusAt } from './key-states.ts'

const row = (kid: string, createdAt: string): SigningKeyRow => ({
  seq: '1',
  kid,
  public_jwk: {},
  sealed_private_key: '',
  source: 'generated',
  created_at: new Date(createdAt),
})

describe('keyStates', () => {
  test('behavior: the newest key is current; each older one retires one token lifetime and the grace after its successor came', () => {
    const ttl = 3_600
    const rows = [
      row('k3', '2026-05-03T00:00:00Z'),
      row('k2', '2026-05-02T00:00:00Z'),
      row('k1', '2026-05-01T00:00:00Z'),
    ]
    const [k3, k2, k1] = keyStates(rows, ttl)
    expect(k3!.retiresAt).toBeNull()
    const k2Retires = Date.parse('2026-05-03T00:00:00Z') + (ttl + RETIREMENT_GRACE_SECONDS) * 1000
    expect(k2!.retiresAt?.getTime()).toBe(k2Retires)
    expect(k1!.retiresAt?.getTime()).toBe(
      Date.parse('2026-05-02T00:00:00Z') + (ttl + RETIREMENT_GRACE_SECONDS) * 1000,
    )
    const now = Date.parse('2026-05-03T00:30:00Z')
    expect([k3, k2, k1].map((s) => statusAt(s!, now))).toEqual(['current', 'retiring', 'retired'])
    expect(statusAt(k2!, k2Retires - 1)).toBe('retiring')
    expect(statusAt(k2!, k2Retires)).toBe('retired')
    expect(statusAt(k3!, Number.MAX_SAFE_INTEGER)).toBe('current')
  })

  test('behavior: no keys, no states', () => {
    expect(keyStates([], 60)).toEqual([])
  })
})
