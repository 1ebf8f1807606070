import { ALLOW_MASK } from '../common/permissions.ts'
import type { AccountRow, Repos, WalletRow, WalletStatus } from '../db/repos/index.ts'
import { type AccountAction, accountTransition, LIVE_WALLET_STATUSES } from './transitions.ts'

/** Who asked: a client id, 'operator' (CLI) or 'chain' (follower). */
export type Actor = string

/**
 * Moves a wallet to `to` with `patch`, records the audit row when the status changes, and enqueues the
 * on-chain permissions when given, through `r`: the repositories of the caller's transaction
 * (`inTransaction`). The one way wallet statuses change (API, CLI and chain alike).
 */
export async function moveWallet(
  r: Repos,
  wallet: WalletRow,
  to: WalletStatus,
  patch: Partial<WalletRow>,
  change: { actor: Actor; reason: string; permissions?: bigint },
): Promise<WalletRow> {
  const updated = await r.wallets.update(wallet.id, { status: to, ...patch })
  if (wallet.status !== to) {
    await r.audit.record({
      entity: 'wallet',
      entityId: wallet.id,
      from: wallet.status,
      to,
      actor: change.actor,
      reason: change.reason,
    })
    if (to === 'ALLOWLISTED' || to === 'REMOVED') await r.webhooks.emitWalletStatus(updated, change.reason)
  }
  if (change.permissions !== undefined) {
    await r.allowlistChanges.enqueue({
      walletId: wallet.id,
      address: wallet.address,
      permissions: change.permissions,
      reason: change.reason,
    })
  }
  return updated
}

/** The effect of an account transition on its wallets. */
async function cascade(r: Repos, account: AccountRow, action: AccountAction, actor: Actor) {
  const reason = `account_${action}`
  for (const w of await r.wallets.listByAccounts([account.id])) {
    if (action === 'pause' || action === 'deny') {
      if (!LIVE_WALLET_STATUSES.includes(w.status)) continue
      await moveWallet(
        r,
        w,
        'PAUSED',
        { paused_by: 'account', ...(action === 'deny' ? { status_reason: 'account denied' } : {}) },
        { actor, reason, ...(w.wants_allowlist ? { permissions: 0n } : {}) },
      )
    } else if (action === 'reactivate') {
      if (w.status !== 'PAUSED' || w.paused_by !== 'account') continue
      await moveWallet(
        r,
        w,
        w.wants_allowlist ? 'NOT_READY' : 'NOT_ALLOWLISTED',
        { paused_by: null },
        { actor, reason, ...(w.wants_allowlist ? { permissions: ALLOW_MASK } : {}) },
      )
    } else if (action === 'remove') {
      if (w.status === 'REMOVED') continue
      if (w.status === 'DENIED' || w.status === 'PENDING_REMOVAL') {
        await r.wallets.update(w.id, { on_platform: false })
        continue
      }
      const onChain = w.wants_allowlist || w.allowlisted
      await moveWallet(
        r,
        w,
        onChain ? 'PENDING_REMOVAL' : 'REMOVED',
        { on_platform: false, paused_by: null },
        { actor, reason, ...(onChain ? { permissions: 0n } : {}) },
      )
    }
  }
}

/**
 * Applies an account transition (table in transitions.ts) through `r`, the repositories of a transaction:
 * the status, its audit row and the effect on the account's wallets. Returns the account as it is now
 * (unchanged when the transition is idempotent), or undefined when the transition is refused.
 */
export async function moveAccount(
  r: Repos,
  account: AccountRow,
  action: AccountAction,
  actor: Actor,
  reason?: string,
): Promise<AccountRow | undefined> {
  const to = accountTransition(account.status, action)
  if (to === undefined) return undefined
  if (to === account.status) return account
  const updated = await r.accounts.setStatus(account.id, to)
  await r.audit.record({
    entity: 'account',
    entityId: account.id,
    from: account.status,
    to,
    actor,
    ...(reason ? { reason } : {}),
  })
  if (to === 'DENIED') await r.webhooks.emitAccountDenied(updated, reason)
  await cascade(r, account, action, actor)
  return updated
}
