import type { AccountStatus, WalletStatus } from '../db/repos/index.ts'

export type AccountAction = 'pause' | 'remove' | 'reactivate' | 'deny'
export type WalletAction = 'pause' | 'remove' | 'reactivate' | 'legacy_remove'

/**
 * Account transition table (docs/decisions.md "Accounts"). PATCH is idempotent; `undefined` means refused (400).
 *
 * @example
 * accountTransition('ACTIVE', 'pause') // 'PAUSED'
 * accountTransition('REMOVED', 'reactivate') // undefined
 */
export function accountTransition(from: AccountStatus, action: AccountAction): AccountStatus | undefined {
  const table: Record<AccountAction, Partial<Record<AccountStatus, AccountStatus>>> = {
    pause: { ACTIVE: 'PAUSED', PAUSED: 'PAUSED' },
    remove: { ACTIVE: 'REMOVED', PAUSED: 'REMOVED', DENIED: 'REMOVED', REMOVED: 'REMOVED' },
    reactivate: { PAUSED: 'ACTIVE', ACTIVE: 'ACTIVE' },
    deny: { ACTIVE: 'DENIED', PAUSED: 'DENIED', DENIED: 'DENIED' },
  }
  return table[action][from]
}

/** Wallet statuses in which the wallet is live on the platform (not paused, removed or denied). */
export const LIVE_WALLET_STATUSES: readonly WalletStatus[] = ['NOT_READY', 'ALLOWLISTED', 'NOT_ALLOWLISTED']

/**
 * Wallet transition table (docs/decisions.md "Wallets"). The target status of reactivate and remove
 * depends on whether the wallet is meant to be on the Allowlist: `wantsAllowlist` and `onChain`
 * (it holds or may hold permissions on chain). `undefined` means refused (400).
 *
 * @example
 * walletTransition('ALLOWLISTED', 'remove', { wantsAllowlist: true, onChain: true }) // 'PENDING_REMOVAL'
 */
export function walletTransition(
  from: WalletStatus,
  action: WalletAction,
  wallet: { wantsAllowlist: boolean; onChain: boolean },
): WalletStatus | undefined {
  switch (action) {
    case 'pause':
      if (LIVE_WALLET_STATUSES.includes(from) || from === 'PAUSED') return 'PAUSED'
      return undefined
    case 'reactivate':
      if (from === 'PAUSED') return wallet.wantsAllowlist ? 'NOT_READY' : 'NOT_ALLOWLISTED'
      if (LIVE_WALLET_STATUSES.includes(from)) return from
      return undefined
    case 'remove':
      if (from === 'REMOVED' || from === 'PENDING_REMOVAL') return from
      if (from === 'DENIED') return 'REMOVED'
      return wallet.onChain ? 'PENDING_REMOVAL' : 'REMOVED'
    case 'legacy_remove':
      if (from === 'NOT_READY' || from === 'ALLOWLISTED') return 'PENDING_REMOVAL'
      if (from === 'NOT_ALLOWLISTED' || from === 'PAUSED' || from === 'PENDING_REMOVAL' || from === 'REMOVED')
        return from
      return undefined
  }
}
