import type { Queryable, Tx } from '../index.ts'
import { createAccountsRepo } from './accounts.ts'
import { createAllowlistChangesRepo } from './allowlist-changes.ts'
import { createAuditRepo } from './audit.ts'
import { createChainRepo } from './chain.ts'
import { createClientsRepo } from './clients.ts'
import { createConsensusRepo } from './consensus.ts'
import { createDaysRepo } from './days.ts'
import { createDelegationsRepo } from './delegations.ts'
import { createDiscountsRepo } from './discounts.ts'
import { createExportReadsRepo } from './export-reads.ts'
import { createExportsRepo } from './exports.ts'
import { createOrgsRepo } from './orgs.ts'
import { createPricesRepo } from './prices.ts'
import { createRecordsRepo } from './records.ts'
import { createRedemptionsRepo } from './redemptions.ts'
import { createReportsRepo } from './reports.ts'
import { createSigningKeysRepo } from './signing-keys.ts'
import { createSolAllowlistRepo } from './sol-allowlist.ts'
import { createWalletsRepo } from './wallets.ts'
import { createWebhooksRepo } from './webhooks.ts'

/** The repository factories, by the name each repository has on `Repos`. */
const FACTORIES = {
  orgs: createOrgsRepo,
  clients: createClientsRepo,
  accounts: createAccountsRepo,
  wallets: createWalletsRepo,
  audit: createAuditRepo,
  allowlistChanges: createAllowlistChangesRepo,
  discounts: createDiscountsRepo,
  solAllowlist: createSolAllowlistRepo,
  chain: createChainRepo,
  redemptions: createRedemptionsRepo,
  days: createDaysRepo,
  records: createRecordsRepo,
  reports: createReportsRepo,
  webhooks: createWebhooksRepo,
  delegations: createDelegationsRepo,
  prices: createPricesRepo,
  consensus: createConsensusRepo,
  signingKeys: createSigningKeysRepo,
  exports: createExportsRepo,
  exportReads: createExportReadsRepo,
} as const

/** Every repository over one database handle (the pool, or a transaction), as `createRepos` returns them. */
export type Repos = { readonly [name in keyof typeof FACTORIES]: ReturnType<(typeof FACTORIES)[name]> }

/**
 * Holds the handle; each repository is built on its first access (a getter on the prototype that then
 * stores the repository on the instance), so making one `Repos` per transaction costs one allocation.
 */
class LazyRepos {
  constructor(readonly handle: Queryable) {}
}
for (const [name, factory] of Object.entries(FACTORIES)) {
  Object.defineProperty(LazyRepos.prototype, name, {
    get(this: LazyRepos) {
      const repo = factory(this.handle)
      Object.defineProperty(this, name, { value: repo, enumerable: true })
      return repo
    },
  })
}

/**
 * Every repository over one handle: the pool, or a transaction (then every method runs in it). Each is built
 * on first access. In a transaction use `inTransaction`, which hands out repositories bound to it.
 *
 * @example
 * const repos = createRepos(db)
 * const account = await repos.accounts.get(id)
 */
export function createRepos(db: Queryable): Repos {
  return new LazyRepos(db) as unknown as Repos
}

/**
 * The one way to use repositories in a transaction: opens a knex transaction on `db` (the same call on
 * Postgres and PGlite; on a transaction, a savepoint) and runs `work` with repositories bound to it, plus the
 * raw `tx` for the few raw queries. Commits when `work` resolves and returns its value; rolls back and rethrows
 * when it throws. Inside, use only these repositories: one bound to the pool would run outside the
 * transaction (on PGlite, whose one connection the transaction holds, it would wait for that connection
 * until the pool gives up).
 *
 * @example
 * const account = await inTransaction(db, async (repos) => {
 *   const row = await repos.accounts.insert({ id, orgId, key })
 *   await repos.audit.record({ entity: 'account', entityId: row.id, from: null, to: 'ACTIVE', actor })
 *   return row
 * })
 */
export function inTransaction<T>(db: Queryable, work: (repos: Repos, tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction((tx) => work(createRepos(tx), tx))
}

/** Row and status types the other layers use, re-exported from their repositories. */
export type { AccountRow, AccountStatus } from './accounts.ts'
export { ALLOWLIST_CHANGE_REASON_PREFIX, type AllowlistChangeRow } from './allowlist-changes.ts'
export type { ClientRow } from './clients.ts'
export type { ConsensusSnapshotSource, StoredConsensusSnapshot } from './consensus.ts'
export type { OrgRow } from './orgs.ts'
export type { Price, PriceCurrency, ReportPrices } from './prices.ts'
export type { SigningKeyRow, SigningKeySource } from './signing-keys.ts'
export type { SolAllowlistRow } from './sol-allowlist.ts'
export type { WalletRow, WalletStatus, WalletView } from './wallets.ts'
