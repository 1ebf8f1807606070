import type { Knex } from 'knex'

/**
 * The ETH price beside every oracle report: one row per report and currency ('usd', 'eur'), read from the
 * chain's Chainlink-shaped feed at the report's block (chain/price-feeds.ts), keyed as `oracle_reports` is
 * (chain_id, block_number, log_index). A row holds either the feed's answer (its round, `answer` /
 * 10^`decimals`, and the round's `updatedAt` as `price_time`) or, when there is no price, `missing_reason`
 * (no feed configured, no code at the block, a revert, a non-positive answer); `feed` is null only when none is
 * configured. The foreign key removes a report's prices with the report (a reorg's rollback); the follower
 * writes them in the report's transaction.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('report_prices', (t) => {
    t.integer('chain_id').notNullable()
    t.bigInteger('block_number').notNullable()
    t.integer('log_index').notNullable()
    t.text('currency').notNullable()
    t.text('feed')
    t.decimal('round_id', 78, 0)
    t.decimal('answer', 78, 0)
    t.integer('decimals')
    t.timestamp('price_time', { useTz: true })
    t.text('missing_reason')
    t.primary(['chain_id', 'block_number', 'log_index', 'currency'])
    t.foreign(['chain_id', 'block_number', 'log_index'])
      .references(['chain_id', 'block_number', 'log_index'])
      .inTable('oracle_reports')
      .onDelete('CASCADE')
  })
  await db.raw(
    `alter table report_prices add constraint report_prices_answer_check
       check (currency in ('usd', 'eur')
         and ((answer is not null) <> (missing_reason is not null))
         and (answer is null or (answer > 0 and round_id is not null and decimals is not null
           and price_time is not null and feed is not null))
         and (missing_reason is null or (round_id is null and decimals is null and price_time is null)))`,
  )
}

/** Drops the table (its rows are read again from the chain by a new sync). */
export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('report_prices')
}
