import type { Queryable } from '../index.ts'
import { createAccountsRepo } from './accounts.ts'
import { createAllowlistChangesRepo } from './allowlist-changes.ts'
import { createAuditRepo } from './audit.ts'
import { createChainRepo } from './chain.ts'
import { createClientsRepo } from './clients.ts'
import { createDaysRepo } from './days.ts'
import { createDiscountsRepo } from './discounts.ts'
import { createOrgsRepo } from './orgs.ts'
import { createRecordsRepo } from './records.ts'
import { createRedemptionsRepo } from './redemptions.ts'
import { createReportsRepo } from './reports.ts'
import { createSolAllowlistRepo } from './sol-allowlist.ts'
import { createWalletsRepo } from './wallets.ts'
import { createWebhooksRepo } from './webhooks.ts'

/** Every repository over one database handle. */
export function createRepos(db: Queryable) {
  return {
    orgs: createOrgsRepo(db),
    clients: createClientsRepo(db),
    accounts: createAccountsRepo(db),
    wallets: createWalletsRepo(db),
    audit: createAuditRepo(db),
    allowlistChanges: createAllowlistChangesRepo(db),
    discounts: createDiscountsRepo(db),
    solAllowlist: createSolAllowlistRepo(db),
    chain: createChainRepo(db),
    redemptions: createRedemptionsRepo(db),
    days: createDaysRepo(db),
    records: createRecordsRepo(db),
    reports: createReportsRepo(db),
    webhooks: createWebhooksRepo(db),
  }
}
/** Every repository, as `createRepos` returns them. */
export type Repos = ReturnType<typeof createRepos>

/** Row and status types the other layers use, re-exported from their repositories. */
export type { AccountRow, AccountStatus } from './accounts.ts'
export type { AllowlistChangeRow } from './allowlist-changes.ts'
export type { ClientRow } from './clients.ts'
export type { OrgRow } from './orgs.ts'
export type { SolAllowlistRow } from './sol-allowlist.ts'
export type { WalletRow, WalletStatus } from './wallets.ts'
