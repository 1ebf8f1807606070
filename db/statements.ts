import type { Knex } from 'knex'
import type { Queryable } from './index.ts'

/**
 * A SQL statement run as a named (prepared) statement: Postgres parses and plans it once per connection,
 * and no query builder runs per call. Two rules keep it safe, checked when it is made:
 * - its text never changes: lists go in as one array binding (`arrayLiteral`), never as expanded `?`s;
 * - it names its columns: with a `*`, a migration adding a column while the service runs would make every
 *   connection that prepared it fail with "cached plan must not change result type" until it closes.
 *
 * @example
 * const byAddress = namedStatement('wallet_by_address', 'select id, address from wallets where address = ?')
 * const rows = await byAddress.rows<{ id: string }>(db, ['0xab...'])
 */
export function namedStatement(name: string, sql: string) {
  if (sql.replace(/count\(\*\)/gi, '').includes('*')) {
    throw new Error(`named statement ${name}: name its columns (no *): a migration would break it`)
  }
  return {
    name,
    sql,
    /** The statement's rows on this handle (a pool or a transaction). */
    async rows<T>(db: Queryable, bindings: readonly Knex.RawBinding[]): Promise<T[]> {
      const result = await db.raw(sql, bindings).options({ name })
      return result.rows as T[]
    },
  }
}

/** A Postgres array literal (`{"a","b"}`) of the values: one binding for a list of any length. */
export function arrayLiteral(values: readonly (string | number)[]): string {
  return `{${values.map((v) => `"${String(v).replace(/["\\]/g, '\\$&')}"`).join(',')}}`
}

/**
 * The named statement reading one row of an organization's `table` by `column` (bindings: org id, value).
 *
 * @example
 * const accountById = orgRowStatement('lsreport_account_by_id', 'accounts', 'id, org_id, key', 'id')
 */
export function orgRowStatement(name: string, table: string, columns: string, column: string) {
  return namedStatement(name, `select ${columns} from ${table} where org_id = ? and ${column} = ?`)
}
