import type { Knex } from 'knex'

/**
 * ETH/EUR derived where a chain has no ETH / EUR feed (mainnet): ETH / USD / EUR / USD at the report's block,
 * both rounds kept in the report's `eur` row of `report_prices`, so the price can be recomputed from the row
 * alone. A derived row has `derived` true; its `answer` / `decimals` are the derived price (18 decimals,
 * engine/cross-price.ts), its `feed`, `round_id` and `price_time` name its ETH / USD round (whose answer and
 * decimals are `eth_usd_answer`, `eth_usd_decimals`), and the `eur_usd_*` columns its EUR / USD round (feed,
 * round, answer, decimals, updatedAt). Every other row, those stored before included, has `derived` false and
 * these columns null (read as a direct price). A derived price that is missing (either round missing) is a
 * plain missing row whose reason names the missing pair.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('report_prices', (t) => {
    t.boolean('derived').notNullable().defaultTo(false)
    t.decimal('eth_usd_answer', 78, 0)
    t.integer('eth_usd_decimals')
    t.text('eur_usd_feed')
    t.decimal('eur_usd_round_id', 78, 0)
    t.decimal('eur_usd_answer', 78, 0)
    t.integer('eur_usd_decimals')
    t.timestamp('eur_usd_time', { useTz: true })
  })
  await db.raw(
    `alter table report_prices add constraint report_prices_derived_check
       check ((not derived
           and eth_usd_answer is null and eth_usd_decimals is null and eur_usd_feed is null
           and eur_usd_round_id is null and eur_usd_answer is null and eur_usd_decimals is null
           and eur_usd_time is null)
         or (derived and currency = 'eur' and answer is not null
           and eth_usd_answer > 0 and eth_usd_decimals is not null and eur_usd_feed is not null
           and eur_usd_round_id is not null and eur_usd_answer > 0 and eur_usd_decimals is not null
           and eur_usd_time is not null))`,
  )
}

/** Drops the columns (a derived row's answer stays, read as a direct price of its ETH / USD feed). */
export async function down(db: Knex): Promise<void> {
  await db.raw('alter table report_prices drop constraint report_prices_derived_check')
  await db.schema.alterTable('report_prices', (t) => {
    for (const column of [
      'derived',
      'eth_usd_answer',
      'eth_usd_decimals',
      'eur_usd_feed',
      'eur_usd_round_id',
      'eur_usd_answer',
      'eur_usd_decimals',
      'eur_usd_time',
    ])
      t.dropColumn(column)
  })
}
