import type { Knex } from 'knex'

/** A value of a tuple in a list: text, a number or a bigint (sent as text in a typed array). */
export type TupleValue = string | number | bigint

const SQL_TYPE = /^(int|integer|bigint|numeric|text)$/

/**
 * Restricts `query` to rows whose `columns` equal one of `tuples`, as `(a, b) in (select * from unnest(?::t1[],
 * ?::t2[]))`: one typed array per column, so two parameters whatever the list's length, and a plan (a hashed
 * semi-join) that does not nest. knex's `whereIn([a, b], tuples)` writes `(a, b) in ((?, ?), (?, ?), ...)`,
 * which Postgres parses into a chain of ORs one level per tuple: on Postgres it fails past 5,000-10,000 tuples
 * ("stack depth limit exceeded"; and past 65,535 parameters), and on PGlite a few hundred overflow the
 * JavaScript stack, which PGlite 0.5 swallowed (an empty answer, db/pglite-guard.ts). Use this for any list of
 * tuples whose length the data decides.
 *
 * @example
 * whereTuplesIn(db('redeem_claims'), ['block_number', 'log_index'], ['bigint', 'int'], [[21_000_000n, 7]])
 */
export function whereTuplesIn<Q extends Knex.QueryBuilder>(
  query: Q,
  columns: readonly string[],
  types: readonly string[],
  tuples: readonly (readonly TupleValue[])[],
): Q {
  if (columns.length === 0 || columns.length !== types.length) {
    throw new Error(`whereTuplesIn: ${columns.length} columns for ${types.length} types`)
  }
  for (const type of types)
    if (!SQL_TYPE.test(type)) throw new Error(`whereTuplesIn: unsupported type ${type}`)
  const arrays = columns.map((_, i) =>
    tuples.map((tuple) => {
      if (tuple.length !== columns.length) throw new Error(`whereTuplesIn: a tuple of ${tuple.length} values`)
      return String(tuple[i])
    }),
  )
  const names = columns.map(() => '??').join(', ')
  const unnest = types.map((type) => `?::${type}[]`).join(', ')
  return query.whereRaw(`(${names}) in (select * from unnest(${unnest}))`, [...columns, ...arrays]) as Q
}
