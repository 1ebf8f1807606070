import type { Knex } from 'knex'
import { WALLET_AMOUNT_COLUMNS_ADDED_BY_012 as COLUMNS } from '../records/columns.ts'

/**
 * Wallet and account records keep their LsETH flows in ETH: `balance_eth` (the balance at the record's
 * report rate), `mints_eth` / `burns_eth` (the day's flows at that day's rate, floor(shares x U / S)) and
 * their running sums. Records already stored are filled with exactly what the engine computes (div: the
 * floor of the exact quotient; the totals the running sums over each wallet's records in chain order, one
 * chain and version at a time); account records are their wallets' sums.
 */
export async function up(db: Knex): Promise<void> {
  for (const table of ['wallet_records', 'account_records']) {
    await db.schema.alterTable(table, (t) => {
      for (const column of COLUMNS) t.decimal(column, 78, 0).notNullable().defaultTo(0)
    })
  }
  await db.raw(`
    update wallet_records w set
      balance_eth = div(w.balance_lseth * p.total_underlying_eth, p.total_lseth_supply),
      mints_eth = div(w.mints_lseth * p.total_underlying_eth, p.total_lseth_supply),
      burns_eth = div(w.burns_lseth * p.total_underlying_eth, p.total_lseth_supply)
    from protocol_records p
    where p.chain_id = w.chain_id and p.report_epoch = w.report_epoch and p.version = w.version`)
  await db.raw(`
    with running as (
      select w.chain_id, w.report_epoch, w.version, w.address,
        sum(w.mints_eth) over history as total_mints_eth,
        sum(w.burns_eth) over history as total_burns_eth
      from wallet_records w
      join days d on d.chain_id = w.chain_id and d.report_epoch = w.report_epoch
        and d.visible_version = w.version
      window history as (partition by w.chain_id, w.address order by d.block_number, d.log_index)
    )
    update wallet_records w set total_mints_eth = r.total_mints_eth, total_burns_eth = r.total_burns_eth
    from running r
    where r.chain_id = w.chain_id and r.report_epoch = w.report_epoch and r.version = w.version
      and r.address = w.address`)
  await db.raw(`
    update account_records a set ${COLUMNS.map((c) => `${c} = s.${c}`).join(', ')}
    from (
      select chain_id, report_epoch, version, account_id, ${COLUMNS.map((c) => `sum(${c}) as ${c}`).join(', ')}
      from wallet_records where account_id is not null
      group by chain_id, report_epoch, version, account_id
    ) s
    where s.chain_id = a.chain_id and s.report_epoch = a.report_epoch and s.version = a.version
      and s.account_id = a.account_id`)
  for (const table of ['wallet_records', 'account_records']) {
    await db.schema.alterTable(table, (t) => {
      for (const column of COLUMNS) t.decimal(column, 78, 0).notNullable().alter({ alterNullable: false })
    })
  }
}

/** Drops the columns. */
export async function down(db: Knex): Promise<void> {
  for (const table of ['wallet_records', 'account_records']) {
    await db.schema.alterTable(table, (t) => {
      for (const column of COLUMNS) t.dropColumn(column)
    })
  }
}
