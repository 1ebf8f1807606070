import { randomUUID } from 'node:crypto'
import { toAddress, ZERO_ADDRESS } from '../common/address.ts'
import { NotFoundError, StateError, ValidationError } from '../common/errors.ts'
import { groupBy } from '../common/group.ts'
import { ALLOW_MASK } from '../common/permissions.ts'
import type { Db } from '../db/index.ts'
import {
  type AccountRow,
  createRepos,
  inTransaction,
  type Repos,
  type WalletRow,
  type WalletStatus,
  type WalletView,
} from '../db/repos/index.ts'
import { accountKey } from './account-keys.ts'
import { type Actor, moveAccount, moveWallet } from './moves.ts'
import { type AccountAction, type WalletAction, walletTransition } from './transitions.ts'

/** An account with its wallets, as the platform answers it. */
export interface AccountView extends AccountRow {
  wallets: WalletView[]
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === '23505'
}

/**
 * An address is attached to one wallet across all organizations (its fees are attributed once). Refusing a second
 * one tells the caller only that: the message is the same whether the wallet is the caller's or another
 * organization's, and names neither the account nor the organization (docs/decisions.md, "Wallets").
 */
function addressNotAvailable(address: string): StateError {
  return new StateError(
    `address ${address} is not available: an address can be attached to one wallet only, across all platforms`,
    { reason: 'address_taken' },
  )
}

/** Accounts and wallets of platforms: the rules of the interface and docs/decisions.md "Accounts" and "Wallets". */
export function createPlatformService(db: Db) {
  const repos = createRepos(db)

  /** The org's account, through `r` (the pool's repositories, or a transaction's to lock it: `forUpdate`). */
  async function accountOr404(r: Repos, orgId: string, idOrKey: string, forUpdate = false) {
    const account = await r.accounts.findByIdOrKey(orgId, idOrKey, { forUpdate })
    if (!account)
      throw new NotFoundError(`account ${JSON.stringify(idOrKey)} not found`, { reason: 'account_not_found' })
    return account
  }

  async function withWallets(accounts: AccountRow[], r: Repos = repos): Promise<AccountView[]> {
    const wallets = await r.wallets.viewsByAccounts(accounts.map((a) => a.id))
    const walletsOf = groupBy(wallets, (w) => w.account_id)
    return accounts.map((a) => ({ ...a, wallets: walletsOf.get(a.id) ?? [] }))
  }

  return {
    async createAccount(orgId: string, rawKey: string, actor: Actor): Promise<AccountView> {
      const key = accountKey(rawKey)
      try {
        return await inTransaction(db, async (r) => {
          if (await r.accounts.existsKey(orgId, key)) {
            throw new StateError(`an account with key ${JSON.stringify(key)} already exists`, {
              reason: 'account_key_taken',
            })
          }
          const account = await r.accounts.insert({ id: randomUUID(), orgId, key })
          await r.audit.record({ entity: 'account', entityId: account.id, from: null, to: 'ACTIVE', actor })
          return { ...account, wallets: [] }
        })
      } catch (err) {
        if (isUniqueViolation(err))
          throw new StateError(`an account with key ${JSON.stringify(key)} already exists`, {
            reason: 'account_key_taken',
          })
        throw err
      }
    },

    /** One page of the org's accounts with their wallets, and how many accounts the org has. */
    async listAccounts(
      orgId: string,
      page: { offset: number; limit: number },
    ): Promise<{ rows: AccountView[]; total: number }> {
      const { rows, total } = await repos.accounts.list(orgId, page)
      return { rows: await withWallets(rows), total }
    },

    async getAccount(orgId: string, idOrKey: string): Promise<AccountView> {
      const [view] = await withWallets([await accountOr404(repos, orgId, idOrKey)])
      return view!
    },

    /** pause / remove / reactivate / deny with the transition table; idempotent. */
    async transitionAccount(
      orgId: string,
      idOrKey: string,
      action: AccountAction,
      actor: Actor,
    ): Promise<AccountView> {
      return inTransaction(db, async (r) => {
        const account = await accountOr404(r, orgId, idOrKey, true)
        const updated = await moveAccount(r, account, action, actor)
        if (updated === undefined) {
          throw new StateError(`cannot ${action} an account that is ${account.status}`, {
            reason: 'account_transition',
          })
        }
        const [view] = await withWallets([updated], r)
        return view!
      })
    },

    async createWallet(
      org: { id: string; can_allowlist: boolean },
      idOrKey: string,
      input: { address: string; type: string; allowlisted: boolean },
      actor: Actor,
    ): Promise<WalletRow> {
      if (input.type !== 'ETH')
        throw new ValidationError(`type must be ETH (got ${JSON.stringify(input.type)})`, {
          reason: 'wallet_type',
        })
      const address = toAddress(input.address)
      if (address === ZERO_ADDRESS)
        throw new ValidationError('the zero address cannot be a wallet', { reason: 'zero_address' })
      try {
        return await inTransaction(db, async (r) => {
          const account = await accountOr404(r, org.id, idOrKey, true)
          if (account.status !== 'ACTIVE') {
            throw new StateError(`account is ${account.status}: it accepts no new wallets`, {
              reason: 'account_not_active',
            })
          }
          if (input.allowlisted && !org.can_allowlist) {
            throw new StateError(
              'this organization may add wallets to the On-Platform list only (allowlisted: false)',
              { reason: 'allowlist_not_permitted' },
            )
          }
          if (await r.wallets.findByAddressAnyOrg(address)) throw addressNotAvailable(address)
          const status: WalletStatus = input.allowlisted ? 'NOT_READY' : 'NOT_ALLOWLISTED'
          const wallet = await r.wallets.insert({
            id: randomUUID(),
            account_id: account.id,
            org_id: org.id,
            originator_org_id: org.id,
            address,
            type: 'ETH',
            status,
            wants_allowlist: input.allowlisted,
            on_platform: true,
          })
          await r.audit.record({ entity: 'wallet', entityId: wallet.id, from: null, to: status, actor })
          if (input.allowlisted) {
            await r.allowlistChanges.enqueue({
              walletId: wallet.id,
              address,
              permissions: ALLOW_MASK,
              reason: 'create',
            })
          }
          return wallet
        })
      } catch (err) {
        if (isUniqueViolation(err)) throw addressNotAvailable(address)
        throw err
      }
    },

    async getWallet(orgId: string, idOrAddress: string): Promise<WalletRow> {
      const wallet = await repos.wallets.findByIdOrAddress(orgId, idOrAddress)
      if (!wallet)
        throw new NotFoundError(`wallet ${JSON.stringify(idOrAddress)} not found`, {
          reason: 'wallet_not_found',
        })
      return wallet
    },

    async listWallets(
      orgId: string,
      filter: { allowlisted?: boolean; onPlatform?: boolean },
      page: { offset: number; limit: number },
    ) {
      return repos.wallets.list(orgId, filter, page)
    },

    /** One page of an account's wallets (oldest first), and how many it has. */
    async accountWallets(
      orgId: string,
      idOrKey: string,
      page: { offset: number; limit: number },
    ): Promise<{ rows: WalletView[]; total: number }> {
      const account = await accountOr404(repos, orgId, idOrKey)
      return repos.wallets.list(orgId, { accountId: account.id }, page)
    },

    /** Wallet pause / reactivate / remove, and the legacy depositor remove (Allowlist only). */
    async transitionWallet(
      orgId: string,
      idOrKey: string,
      idOrAddress: string,
      action: WalletAction,
      actor: Actor,
    ): Promise<WalletRow> {
      return inTransaction(db, async (r) => {
        const account = await accountOr404(r, orgId, idOrKey, true)
        const wallet = await r.wallets.findByIdOrAddress(orgId, idOrAddress)
        if (!wallet || wallet.account_id !== account.id) {
          throw new NotFoundError(`wallet ${JSON.stringify(idOrAddress)} not found in this account`, {
            reason: 'wallet_not_found',
          })
        }
        const onChain = wallet.wants_allowlist || wallet.allowlisted
        const to = walletTransition(wallet.status, action, {
          wantsAllowlist: wallet.wants_allowlist,
          onChain,
        })
        const label = action === 'legacy_remove' ? 'remove the Allowlist permission of' : action
        if (to === undefined)
          throw new StateError(`cannot ${label} a wallet that is ${wallet.status}`, {
            reason: 'wallet_transition',
          })
        const reason = `wallet_${action}`
        switch (action) {
          case 'pause': {
            if (to === wallet.status) return r.wallets.update(wallet.id, { paused_by: 'wallet' })
            return moveWallet(
              r,
              wallet,
              to,
              { paused_by: 'wallet' },
              {
                actor,
                reason,
                ...(wallet.wants_allowlist ? { permissions: 0n } : {}),
              },
            )
          }
          case 'reactivate': {
            if (to === wallet.status) return wallet
            if (account.status !== 'ACTIVE') {
              throw new StateError(`account is ${account.status}: its wallets cannot be reactivated`, {
                reason: 'account_not_active',
              })
            }
            return moveWallet(
              r,
              wallet,
              to,
              { paused_by: null },
              {
                actor,
                reason,
                ...(wallet.wants_allowlist ? { permissions: ALLOW_MASK } : {}),
              },
            )
          }
          case 'remove': {
            const sendToChain = to === 'PENDING_REMOVAL' && wallet.status !== 'PENDING_REMOVAL'
            return moveWallet(
              r,
              wallet,
              to,
              { on_platform: false, paused_by: null },
              {
                actor,
                reason,
                ...(sendToChain ? { permissions: 0n } : {}),
              },
            )
          }
          case 'legacy_remove': {
            const sendToChain = to === 'PENDING_REMOVAL' && wallet.status !== 'PENDING_REMOVAL'
            const sendFromPause = wallet.status === 'PAUSED' && wallet.wants_allowlist
            return moveWallet(
              r,
              wallet,
              to,
              { wants_allowlist: false },
              {
                actor,
                reason,
                ...(sendToChain || sendFromPause ? { permissions: 0n } : {}),
              },
            )
          }
        }
      })
    },

    /**
     * Records a target fee rate for an account (history kept); the caller has validated the rate. A REMOVED
     * or DENIED account (final states) is refused: its terms no longer change.
     */
    async addDiscountRate(orgId: string, idOrKey: string, targetFeeRate: string, actor: Actor) {
      return inTransaction(db, async (r) => {
        const account = await accountOr404(r, orgId, idOrKey, true)
        if (account.status === 'REMOVED' || account.status === 'DENIED') {
          throw new StateError(`account is ${account.status}: its target fee rate cannot change`, {
            reason: 'account_final',
          })
        }
        return r.discounts.add({ accountId: account.id, targetFeeRate, createdBy: actor })
      })
    },
  }
}

export type PlatformService = ReturnType<typeof createPlatformService>
