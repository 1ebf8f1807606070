import type { Address } from '../../common/address.ts'
import type { Queryable } from '../index.ts'
import { arrayLiteral, namedStatement, orgRowStatement } from '../statements.ts'
import { isUuid } from './accounts.ts'
import { chainClock } from './clock.ts'
import { type Page, pageWithTotal } from './page.ts'

/** Lifecycle of a wallet (docs/decisions.md "Wallets"), from NOT_READY to REMOVED or DENIED. */
export type WalletStatus =
  | 'NOT_READY'
  | 'ALLOWLISTED'
  | 'NOT_ALLOWLISTED'
  | 'PAUSED'
  | 'PENDING_REMOVAL'
  | 'REMOVED'
  | 'DENIED'

/** One row of `wallets`: an address attached to an account, its platform status and chain permissions. */
export interface WalletRow {
  id: string
  account_id: string
  org_id: string
  originator_org_id: string
  address: string
  type: string
  status: WalletStatus
  wants_allowlist: boolean
  allowlisted: boolean
  chain_permissions: string
  on_platform: boolean
  paused_by: 'wallet' | 'account' | null
  status_reason: string | null
  created_at: Date
  updated_at: Date
  /** Chain time from which the wallet counts for its account and org (see chainClock). */
  attributed_from?: Date
  /** Chain time at which it left the On-Platform list (null while on it). */
  off_platform_from?: Date | null
}

/** Filters of a wallet list: only allowlisted, only on the On-Platform list. */
export interface WalletFilter {
  allowlisted?: boolean
  onPlatform?: boolean
  /** The wallets of one account (of the org). */
  accountId?: string
}

/** The wallet columns an update may change. */
export type WalletPatch = Partial<
  Pick<
    WalletRow,
    | 'status'
    | 'wants_allowlist'
    | 'allowlisted'
    | 'chain_permissions'
    | 'on_platform'
    | 'paused_by'
    | 'status_reason'
  >
>

/** Every column of `wallets` (the fields of WalletRow), for the named reads of the platform endpoints. */
const WALLET_COLUMNS =
  'id, account_id, org_id, originator_org_id, address, type, status, wants_allowlist, allowlisted, ' +
  'chain_permissions, on_platform, paused_by, status_reason, created_at, updated_at, attributed_from, ' +
  'off_platform_from'
const walletById = orgRowStatement('lsreport_wallet_by_id', 'wallets', WALLET_COLUMNS, 'id')
const walletByAddress = orgRowStatement('lsreport_wallet_by_address', 'wallets', WALLET_COLUMNS, 'address')
/** The fields of a wallet the platform endpoints present (api/schemas.ts `walletJson`). */
export const WALLET_VIEW_FIELDS = [
  'id',
  'account_id',
  'address',
  'type',
  'allowlisted',
  'on_platform',
  'originator_org_id',
  'status',
  'status_reason',
  'created_at',
] as const satisfies readonly (keyof WalletRow)[]

/** A wallet as the platform endpoints present it: WALLET_VIEW_FIELDS of its row. */
export type WalletView = Pick<WalletRow, (typeof WALLET_VIEW_FIELDS)[number]>

/** The `columns` of the wallets of some accounts (`any(?::uuid[])`), oldest first, as a named statement. */
const ofAccounts = (name: string, columns: string) =>
  namedStatement(
    name,
    `select ${columns} from wallets where account_id = any(?::uuid[]) order by created_at, id`,
  )
const walletsOfAccounts = ofAccounts('lsreport_wallets_of_accounts', WALLET_COLUMNS)
// an account's wallets are read as views: an account of 100 wallets read its rows' 17 columns (four of them
// timestamps) to present 10, and parsing them was a quarter of that read's server CPU
const walletViewsOfAccounts = ofAccounts('lsreport_wallet_views_of_accounts', WALLET_VIEW_FIELDS.join(', '))

/** Wallets. Addresses are stored lower case and are unique across orgs. */
export function createWalletsRepo(db: Queryable) {
  return {
    /** Inserts a wallet, attributed from the chain clock now; returns its row. */
    async insert(
      input: Omit<
        WalletRow,
        | 'created_at'
        | 'updated_at'
        | 'allowlisted'
        | 'chain_permissions'
        | 'paused_by'
        | 'status_reason'
        | 'attributed_from'
        | 'off_platform_from'
      >,
    ): Promise<WalletRow> {
      const [row] = await db<WalletRow>('wallets')
        .insert({ ...input, attributed_from: chainClock(db) as unknown as Date })
        .returning('*')
      return row!
    },
    /**
     * For a transaction about to change the wallets holding `addresses` (the follower applying chain
     * events): locks their accounts, then those wallets, each in id order. The API takes an account's lock
     * before touching its wallets, so taking them in the same order never deadlocks with it. Call on the
     * repositories of that transaction. Returns the addresses that are wallets (the others need no lookup).
     */
    async lockByAddresses(addresses: readonly Address[]): Promise<Set<Address>> {
      const lower = [...new Set(addresses)]
      if (lower.length === 0) return new Set()
      await db('accounts')
        .select('id')
        .whereIn('id', db('wallets').select('account_id').whereIn('address', lower))
        .orderBy('id')
        .forUpdate()
      const locked: { address: Address }[] = await db('wallets')
        .select('id', 'address')
        .whereIn('address', lower)
        .orderBy('id')
        .forUpdate()
      return new Set(locked.map((w) => w.address))
    },
    /** The wallet holding this address in any org (addresses are unique across orgs). */
    async findByAddressAnyOrg(address: Address): Promise<WalletRow | undefined> {
      return db<WalletRow>('wallets').where({ address }).first()
    },
    /** The org's wallet with this id (when a UUID) or address (any case), or undefined. */
    async findByIdOrAddress(orgId: string, idOrAddress: string): Promise<WalletRow | undefined> {
      const statement = isUuid(idOrAddress) ? walletById : walletByAddress
      const [row] = await statement.rows<WalletRow>(db, [orgId, idOrAddress.toLowerCase()])
      return row
    },
    /** The wallets of these accounts, oldest first. */
    async listByAccounts(accountIds: string[]): Promise<WalletRow[]> {
      if (accountIds.length === 0) return []
      return walletsOfAccounts.rows<WalletRow>(db, [arrayLiteral(accountIds)])
    },
    /** The wallets of these accounts as the platform endpoints present them (WalletView), oldest first. */
    async viewsByAccounts(accountIds: string[]): Promise<WalletView[]> {
      if (accountIds.length === 0) return []
      return walletViewsOfAccounts.rows<WalletView>(db, [arrayLiteral(accountIds)])
    },
    /**
     * One page of the org's wallets as presented (WalletView, oldest first) matching `filter`, and the total
     * count that matches.
     */
    async list(
      orgId: string,
      filter: WalletFilter,
      page: Page,
    ): Promise<{ rows: WalletView[]; total: number }> {
      const base = () =>
        db<WalletRow>('wallets')
          .where({ org_id: orgId })
          .modify((q) => {
            if (filter.allowlisted !== undefined) q.where({ allowlisted: filter.allowlisted })
            if (filter.onPlatform !== undefined) q.where({ on_platform: filter.onPlatform })
            if (filter.accountId !== undefined) q.where({ account_id: filter.accountId })
          })
      return pageWithTotal<WalletView>(base, page, WALLET_VIEW_FIELDS)
    },
    /** Applies `patch` (leaving the On-Platform list stamps off_platform_from once); returns the updated row. */
    async update(id: string, patch: WalletPatch): Promise<WalletRow> {
      const [row] = await db<WalletRow>('wallets')
        .where({ id })
        .update({
          ...patch,
          ...(patch.on_platform === false
            ? { off_platform_from: db.raw('coalesce(off_platform_from, ?)', [chainClock(db)]) }
            : {}),
          updated_at: db.fn.now() as unknown as Date,
        } as unknown as Partial<WalletRow>)
        .returning('*')
      return row!
    },
    /**
     * Clears the `status_reason` of these wallets where it is a note of the allowlist writer (it begins with
     * `prefix`): their change landed. A reason of another kind (a deny, an account's) stays.
     */
    async clearReasonWithPrefix(ids: readonly string[], prefix: string): Promise<void> {
      if (ids.length === 0) return
      await db('wallets')
        .whereIn('id', [...ids])
        .whereRaw('starts_with(status_reason, ?)', [prefix])
        .update({ status_reason: null, updated_at: db.fn.now() })
    },
  }
}
/** The wallets repository `createWalletsRepo` returns. */
export type WalletsRepo = ReturnType<typeof createWalletsRepo>
