import { describe, expect, test } from 'vitest'
import { ALLOW_MASK, PERMISSION } from '../common/permissions.ts'
import type { WalletStatus } from '../db/repos/index.ts'
import { isAllowlisted, statusFromChain } from './chain-sync.ts'

const ALLOW = ALLOW_MASK

describe('isAllowlisted', () => {
  test('behavior: DEPOSIT or REDEEM without DENY', () => {
    expect(isAllowlisted(ALLOW)).toBe(true)
    expect(isAllowlisted(PERMISSION.DEPOSIT)).toBe(true)
    expect(isAllowlisted(PERMISSION.DONATE)).toBe(false)
    expect(isAllowlisted(0n)).toBe(false)
    expect(isAllowlisted(PERMISSION.DENY)).toBe(false)
    expect(isAllowlisted(PERMISSION.DENY | ALLOW)).toBe(false)
  })
})

describe('statusFromChain', () => {
  const cases: [WalletStatus, boolean, bigint, WalletStatus][] = [
    ['NOT_READY', true, ALLOW, 'ALLOWLISTED'],
    ['ALLOWLISTED', true, ALLOW, 'ALLOWLISTED'],
    ['PAUSED', true, ALLOW, 'PAUSED'],
    ['PAUSED', true, 0n, 'PAUSED'],
    ['PENDING_REMOVAL', false, 0n, 'REMOVED'],
    ['PENDING_REMOVAL', true, 0n, 'NOT_ALLOWLISTED'],
    ['PENDING_REMOVAL', false, ALLOW, 'PENDING_REMOVAL'],
    ['NOT_READY', true, 0n, 'NOT_READY'],
    ['ALLOWLISTED', true, PERMISSION.DENY, 'DENIED'],
    ['REMOVED', false, PERMISSION.DENY, 'DENIED'],
  ]
  for (const [status, onPlatform, permissions, to] of cases) {
    test(`behavior: ${status} (on platform: ${onPlatform}) with permissions ${permissions} becomes ${to}`, () => {
      expect(statusFromChain({ status, on_platform: onPlatform }, permissions)).toBe(to)
    })
  }
})
