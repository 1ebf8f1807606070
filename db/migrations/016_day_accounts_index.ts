import type { Knex } from 'knex'

/**
 * A day's registered wallets: the finalization sums a run's wallet records by account (account_records),
 * which the primary key serves only by reading every wallet of the day (1M rows for 1M holders, most of
 * them unregistered) and the account index (004) only by reading every registered row of every day. Partial
 * index: registered wallets are about 1 % of rows.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw(
    `create index wallet_records_day_accounts_idx on wallet_records
       (chain_id, report_epoch, version) where account_id is not null`,
  )
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only')
}
