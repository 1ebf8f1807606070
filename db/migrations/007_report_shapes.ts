import type { Knex } from 'knex'

/**
 * Oracle reports of every protocol version. Before River 1.0.0 a report was `ConsensusLayerDataUpdate`
 * (validator count and total balance only): `report_shape` says which event a row comes from ('v1' for
 * `ProcessedConsensusLayerReport`, 'legacy' for `ConsensusLayerDataUpdate`), and the figures a legacy report does
 * not carry (skimmed, exited and exiting balances, stopped validators per operator, the rebalance and slashing
 * containment modes) become nullable: null means "this protocol version did not report it", never 0.
 *
 * `pool_before_underlying` / `pool_before_supply` are River's U and S right before the report's transaction, read
 * from the chain where they are needed: for the chain's first stored report (its day's growth starts from them,
 * so no day assumes a 1:1 pool) and for a legacy report without a fee mint (its rewards are the pool's change).
 * Null otherwise (a report starts from its predecessor's pool), and on rows ingested before this migration.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('oracle_reports', (t) => {
    t.text('report_shape').notNullable().defaultTo('v1')
    t.decimal('pool_before_underlying', 78, 0).nullable()
    t.decimal('pool_before_supply', 78, 0).nullable()
    for (const column of [
      'validators_skimmed_balance',
      'validators_exited_balance',
      'validators_exiting_balance',
      'stopped_validator_count_per_operator',
      'rebalance_deposit_to_redeem_mode',
      'slashing_containment_mode',
    ]) {
      t.setNullable(column)
    }
  })
  await db.raw(
    `alter table oracle_reports add constraint oracle_reports_shape_check
       check (report_shape in ('v1', 'legacy')
         and (report_shape = 'legacy' or (validators_skimmed_balance is not null
           and validators_exited_balance is not null and validators_exiting_balance is not null
           and stopped_validator_count_per_operator is not null
           and rebalance_deposit_to_redeem_mode is not null and slashing_containment_mode is not null)))`,
  )
}

/** Drops the columns and the constraint; fails while legacy rows (with nulls) exist, as it should. */
export async function down(db: Knex): Promise<void> {
  await db.raw('alter table oracle_reports drop constraint oracle_reports_shape_check')
  await db.schema.alterTable('oracle_reports', (t) => {
    t.dropColumn('report_shape')
    t.dropColumn('pool_before_underlying')
    t.dropColumn('pool_before_supply')
  })
}
