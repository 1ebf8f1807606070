import type { Knex } from 'knex'

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

/**
 * Data: a report's U, S and fee are those right after its transaction (jobs/follower/report-state.ts). Rows
 * ingested before were read at the end of the report's block; here what later transactions of that block did
 * is undone from the stored events (a deposit's amount from U, mints and burns from S; a fee set after the
 * report gives way to the last fee set before it, when one was ingested), and the days from the first
 * corrected report on are sent back to pending, to be computed again.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw(
    `with later as (
       select r.chain_id, r.block_number, r.log_index,
         coalesce((select sum(d.amount) from user_deposits d
           where d.chain_id = r.chain_id and d.block_number = r.block_number and d.tx_index > r.tx_index), 0)
           as deposits,
         coalesce((select sum(case when t.from_address = ? then t.value when t.to_address = ? then -t.value
             else 0 end) from lseth_transfers t
           where t.chain_id = r.chain_id and t.block_number = r.block_number and t.tx_index > r.tx_index), 0)
           as net_mints,
         exists (select 1 from global_fee_changes f
           where f.chain_id = r.chain_id and f.block_number = r.block_number and f.tx_index > r.tx_index)
           as fee_set_after,
         (select f.fee_bps from global_fee_changes f
           where f.chain_id = r.chain_id
             and (f.block_number < r.block_number or (f.block_number = r.block_number and f.tx_index < r.tx_index))
           order by f.block_number desc, f.log_index desc limit 1) as fee_before
       from oracle_reports r
     ),
     corrected as (
       update oracle_reports r set
         total_underlying_supply = r.total_underlying_supply - l.deposits,
         total_supply = r.total_supply - l.net_mints,
         global_fee_bps = case when l.fee_set_after and l.fee_before is not null then l.fee_before
           else r.global_fee_bps end
       from later l
       where r.chain_id = l.chain_id and r.block_number = l.block_number and r.log_index = l.log_index
         and (l.deposits <> 0 or l.net_mints <> 0
           or (l.fee_set_after and l.fee_before is not null and l.fee_before <> r.global_fee_bps))
       returning r.chain_id, r.block_number
     )
     update days d set status = 'pending', reason = 'report state corrected', requested_at = now()
     from (select chain_id, min(block_number) as first from corrected group by chain_id) c
     where d.chain_id = c.chain_id and d.block_number >= c.first`,
    [ZERO_ADDRESS, ZERO_ADDRESS],
  )
}

/** Nothing to undo: the corrected figures are the right ones. */
export async function down(): Promise<void> {}
