import type { Address } from '../common/address.ts'
import { ALLOW_MASK, PERMISSION } from '../common/permissions.ts'
import {
  ALLOWLIST_CHANGE_REASON_PREFIX,
  type Repos,
  type WalletRow,
  type WalletStatus,
} from '../db/repos/index.ts'
import { moveAccount, moveWallet } from './moves.ts'

/** True when the permission mask lets the address deposit or redeem (and it is not denied). */
export function isAllowlisted(permissions: bigint): boolean {
  return (permissions & PERMISSION.DENY) === 0n && (permissions & ALLOW_MASK) !== 0n
}

/**
 * The wallet status the chain implies, given the status the platform last set.
 * - a DENY bit: DENIED (final);
 * - DEPOSIT or REDEEM granted: NOT_READY -> ALLOWLISTED;
 * - nothing granted: PENDING_REMOVAL -> REMOVED (or NOT_ALLOWLISTED when still on platform).
 */
export function statusFromChain(
  wallet: Pick<WalletRow, 'status' | 'on_platform'>,
  permissions: bigint,
): WalletStatus {
  if ((permissions & PERMISSION.DENY) !== 0n) return 'DENIED'
  if (isAllowlisted(permissions)) return wallet.status === 'NOT_READY' ? 'ALLOWLISTED' : wallet.status
  if (wallet.status === 'PENDING_REMOVAL') return wallet.on_platform ? 'NOT_ALLOWLISTED' : 'REMOVED'
  return wallet.status
}

/**
 * Applies `SetAllowlistPermissions` entries, in chain order, to the wallets that hold those addresses:
 * chain permissions, `allowlisted`, status flips, settled allowlist changes (and the writer's note on a change
 * that had reverted cleared), and a DENY bit putting the
 * wallet and its account in DENIED (the account's other live wallets are paused and taken off the Allowlist).
 * Addresses that are no wallet of any org are ignored here (they are still indexed). `repos`: those of the
 * transaction that ingests the entries (`inTransaction`).
 */
export async function applyPermissionEvents(
  repos: Repos,
  entries: { address: Address; permissions: bigint; txHash: string }[],
): Promise<void> {
  // accounts, then wallets, in id order: the API's order (account first), so the two never deadlock
  const walletAddresses = await repos.wallets.lockByAddresses(entries.map((e) => e.address))
  for (const entry of entries) {
    // most entries are holders that are no wallet: no query for them
    if (!walletAddresses.has(entry.address)) continue
    const wallet = await repos.wallets.findByAddressAnyOrg(entry.address)
    if (!wallet) continue
    const to = statusFromChain(wallet, entry.permissions)
    await moveWallet(
      repos,
      wallet,
      to,
      {
        chain_permissions: entry.permissions.toString(),
        allowlisted: isAllowlisted(entry.permissions),
        ...(to === 'DENIED' ? { status_reason: 'denied on the on-chain Allowlist' } : {}),
        ...(to !== wallet.status && to !== 'DENIED' ? { status_reason: null } : {}),
      },
      { actor: 'chain', reason: `tx ${entry.txHash}` },
    )
    const landed = await repos.allowlistChanges.confirmSeen(entry.address, entry.permissions, entry.txHash)
    // the writer's note on a change that had reverted goes once the change lands
    if (landed > 0) await repos.wallets.clearReasonWithPrefix([wallet.id], ALLOWLIST_CHANGE_REASON_PREFIX)
    if (to === 'DENIED') await denyAccountOf(repos, wallet, entry.txHash)
  }
}

async function denyAccountOf(repos: Repos, wallet: WalletRow, txHash: string) {
  const account = await repos.accounts.get(wallet.account_id)
  if (!account) return
  // refused (a REMOVED account) or already DENIED: nothing more to do
  await moveAccount(repos, account, 'deny', 'chain', `wallet ${wallet.address} denied in tx ${txHash}`)
}

/**
 * After a reorg removed Allowlist rows: resets each wallet's chain view to the latest remaining
 * permission, moves statuses the chain no longer supports back (ALLOWLISTED -> NOT_READY, REMOVED or
 * NOT_ALLOWLISTED from a removal -> PENDING_REMOVAL) and re-queues the wallet's latest change so the
 * allowlist writer sends it again. `repos`: those of the transaction that rolled the rows back.
 */
export async function recomputeWalletChainState(
  repos: Repos,
  chainId: number,
  addresses: Address[],
): Promise<void> {
  const walletAddresses = await repos.wallets.lockByAddresses(addresses)
  const latest = await repos.chain.latestPermissions(chainId, addresses)
  for (const address of addresses) {
    if (!walletAddresses.has(address)) continue
    const wallet = await repos.wallets.findByAddressAnyOrg(address)
    if (!wallet) continue
    const permissions = latest.get(address) ?? 0n
    const allowed = isAllowlisted(permissions)
    let status = wallet.status
    if (wallet.status === 'ALLOWLISTED' && !allowed) status = 'NOT_READY'
    const changes = await repos.allowlistChanges.forWallet(wallet.id)
    const last = changes.filter((c) => c.state !== 'superseded').at(-1)
    const wantsZero = last !== undefined && BigInt(last.permissions) === 0n
    if (wantsZero && allowed && (wallet.status === 'REMOVED' || wallet.status === 'NOT_ALLOWLISTED'))
      status = 'PENDING_REMOVAL'
    await moveWallet(
      repos,
      wallet,
      status,
      { chain_permissions: permissions.toString(), allowlisted: allowed },
      { actor: 'chain', reason: 'reorg' },
    )
    if (
      last &&
      BigInt(last.permissions) !== permissions &&
      (last.state === 'confirmed' || last.state === 'submitted')
    ) {
      await repos.allowlistChanges.mark([last.id], { state: 'pending', tx_hash: null })
    }
  }
}
