import type { Knex } from 'knex'

/**
 * Reporting reads: an account's wallet records (POST /eth/v1/rewards/accounts and the account summaries)
 * are found by account id within a day, which the primary key (chain_id, report_epoch, version, address)
 * does not serve. Partial index: unregistered holders (account_id null) are most rows and never read so.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw(
    `create index wallet_records_account_idx on wallet_records
       (account_id, chain_id, report_epoch, version) where account_id is not null`,
  )
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
