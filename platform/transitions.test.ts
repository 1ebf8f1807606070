import { describe, expect, test } from 'vitest'
import type { AccountStatus, WalletStatus } from '../db/repos/index.ts'
import { type AccountAction, accountTransition, type WalletAction, walletTransition } from './transitions.ts'

describe('accountTransition', () => {
  const expected: Record<AccountAction, Record<AccountStatus, AccountStatus | undefined>> = {
    pause: { ACTIVE: 'PAUSED', PAUSED: 'PAUSED', REMOVED: undefined, DENIED: undefined },
    remove: { ACTIVE: 'REMOVED', PAUSED: 'REMOVED', REMOVED: 'REMOVED', DENIED: 'REMOVED' },
    reactivate: { ACTIVE: 'ACTIVE', PAUSED: 'ACTIVE', REMOVED: undefined, DENIED: undefined },
    deny: { ACTIVE: 'DENIED', PAUSED: 'DENIED', REMOVED: undefined, DENIED: 'DENIED' },
  }
  for (const [action, row] of Object.entries(expected) as [
    AccountAction,
    Record<AccountStatus, AccountStatus | undefined>,
  ][]) {
    for (const [from, to] of Object.entries(row) as [AccountStatus, AccountStatus | undefined][]) {
      test(`behavior: ${action} from ${from} ${to ? `gives ${to}` : 'is refused'}`, () => {
        expect(accountTransition(from, action)).toBe(to)
      })
    }
  }
})

describe('walletTransition', () => {
  const onChain = { wantsAllowlist: true, onChain: true }
  const offChain = { wantsAllowlist: false, onChain: false }
  const cases: [WalletStatus, WalletAction, typeof onChain, WalletStatus | undefined][] = [
    ['NOT_READY', 'pause', onChain, 'PAUSED'],
    ['ALLOWLISTED', 'pause', onChain, 'PAUSED'],
    ['NOT_ALLOWLISTED', 'pause', offChain, 'PAUSED'],
    ['PAUSED', 'pause', onChain, 'PAUSED'],
    ['PENDING_REMOVAL', 'pause', onChain, undefined],
    ['REMOVED', 'pause', onChain, undefined],
    ['DENIED', 'pause', onChain, undefined],
    ['PAUSED', 'reactivate', onChain, 'NOT_READY'],
    ['PAUSED', 'reactivate', offChain, 'NOT_ALLOWLISTED'],
    ['ALLOWLISTED', 'reactivate', onChain, 'ALLOWLISTED'],
    ['NOT_ALLOWLISTED', 'reactivate', offChain, 'NOT_ALLOWLISTED'],
    ['REMOVED', 'reactivate', onChain, undefined],
    ['PENDING_REMOVAL', 'reactivate', onChain, undefined],
    ['DENIED', 'reactivate', onChain, undefined],
    ['ALLOWLISTED', 'remove', onChain, 'PENDING_REMOVAL'],
    ['NOT_READY', 'remove', onChain, 'PENDING_REMOVAL'],
    ['NOT_ALLOWLISTED', 'remove', offChain, 'REMOVED'],
    ['PAUSED', 'remove', offChain, 'REMOVED'],
    ['PENDING_REMOVAL', 'remove', onChain, 'PENDING_REMOVAL'],
    ['REMOVED', 'remove', onChain, 'REMOVED'],
    ['DENIED', 'remove', onChain, 'REMOVED'],
    ['ALLOWLISTED', 'legacy_remove', onChain, 'PENDING_REMOVAL'],
    ['NOT_ALLOWLISTED', 'legacy_remove', offChain, 'NOT_ALLOWLISTED'],
    ['DENIED', 'legacy_remove', onChain, undefined],
  ]
  for (const [from, action, wallet, to] of cases) {
    test(`behavior: ${action} from ${from} ${to ? `gives ${to}` : 'is refused'}`, () => {
      expect(walletTransition(from, action, wallet)).toBe(to)
    })
  }
})
