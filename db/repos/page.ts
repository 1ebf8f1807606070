import type { Knex } from 'knex'

/** A page a list asks for: rows to skip, rows at most. */
export interface Page {
  offset: number
  limit: number
}

/**
 * One page of a query, oldest first (`created_at`, then `id`), and how many rows the query has in all: the
 * rows and the count run at once. `base` builds the filtered query afresh for each (knex builders are
 * mutable); `columns` narrows the rows (default every column).
 *
 * @example
 * const { rows, total } = await pageWithTotal(() => db('accounts').where({ org_id }), { offset: 0, limit: 100 })
 */
export async function pageWithTotal<Row>(
  base: () => Knex.QueryBuilder,
  page: Page,
  columns: readonly string[] = ['*'],
): Promise<{ rows: Row[]; total: number }> {
  const [rows, count] = await Promise.all([
    base()
      .select(columns as string[])
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .offset(page.offset)
      .limit(page.limit),
    base().count<{ count: string }[]>({ count: '*' }),
  ])
  return { rows: rows as Row[], total: Number(count[0]?.count ?? 0) }
}
