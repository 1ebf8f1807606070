import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Knex } from 'knex'
import type pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import type { Db } from './index.ts'

/** A value of a bulk-written row: text, a number, a boolean, a bigint or null. */
export type BulkValue = string | number | boolean | bigint | null

const pgliteHandles = new WeakSet<Knex>()

/** Marks a knex handle as running on PGlite (which has no COPY FROM STDIN through its pg adapter). */
export function markPglite(db: Knex): void {
  pgliteHandles.add(db)
}

/** True when `db` runs on PGlite. */
export function isPglite(db: Knex): boolean {
  return pgliteHandles.has(db)
}

// COPY text format: backslash, tab, newline and carriage return are escaped; null is \N
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' }

/**
 * One value in COPY text format.
 *
 * @example
 * copyText('a\tb') // 'a\\tb'
 */
export function copyText(value: BulkValue): string {
  if (value === null) return '\\N'
  if (typeof value === 'boolean') return value ? 't' : 'f'
  if (typeof value !== 'string') return String(value)
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c] as string) : value
}

/** A statement run in the same transaction before the rows are written (e.g. deleting what they replace). */
export interface BulkPrelude {
  sql: string
  bindings: readonly (string | number)[]
}

/**
 * Writes rows into `table` in one transaction, after `prelude`: `COPY ... FROM STDIN` on Postgres (rows are
 * produced while the server ingests the previous ones, so computing overlaps writing), batched multi-row
 * INSERTs on PGlite. Either every row lands or none does. Returns the number of rows written. `onLine`, when
 * given, sees each row in COPY text format (no newline) on both backends: a caller hashing its rows uses it
 * rather than formatting every row a second time.
 *
 * @example
 * await bulkWrite(db, 'wallet_records', columns, rowsOf(records), { sql: 'delete from wallet_records where ...', bindings })
 */
export async function bulkWrite(
  db: Db,
  table: string,
  columns: readonly string[],
  rows: AsyncIterable<BulkValue[]> | Iterable<BulkValue[]>,
  prelude?: BulkPrelude,
  onLine?: (line: string) => void,
): Promise<number> {
  if (isPglite(db)) return insertBatches(db, table, columns, rows, prelude, onLine)
  const conn = (await db.client.acquireConnection()) as pg.PoolClient
  let count = 0
  try {
    await conn.query('BEGIN')
    if (prelude) await conn.query(toPgSql(prelude.sql), [...prelude.bindings])
    const copy = conn.query(
      copyFrom(`COPY ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) FROM STDIN`),
    )
    async function* lines() {
      let chunk = ''
      for await (const row of rows as AsyncIterable<BulkValue[]>) {
        const line = row.map(copyText).join('\t')
        onLine?.(line)
        chunk += `${line}\n`
        count += 1
        if (chunk.length >= 64 * 1024) {
          yield chunk
          chunk = ''
        }
      }
      if (chunk.length > 0) yield chunk
    }
    await pipeline(Readable.from(lines()), copy)
    await conn.query('COMMIT')
    return count
  } catch (err) {
    await conn.query('ROLLBACK').catch(() => undefined)
    throw err
  } finally {
    await db.client.releaseConnection(conn)
  }
}

async function insertBatches(
  db: Db,
  table: string,
  columns: readonly string[],
  rows: AsyncIterable<BulkValue[]> | Iterable<BulkValue[]>,
  prelude: BulkPrelude | undefined,
  onLine: ((line: string) => void) | undefined,
): Promise<number> {
  // PGlite runs on the main thread: small batches, and a yield after each, keep a process's other work (the
  // API of `lsreport up`) answering while a day is written
  const batchRows = Math.max(1, Math.min(100, Math.floor(60_000 / columns.length)))
  let count = 0
  await db.transaction(async (tx) => {
    if (prelude) await tx.raw(prelude.sql, [...prelude.bindings])
    let batch: Record<string, unknown>[] = []
    const flush = async () => {
      if (batch.length === 0) return
      await tx(table).insert(batch)
      batch = []
      await new Promise((resolve) => setImmediate(resolve))
    }
    for await (const row of rows as AsyncIterable<BulkValue[]>) {
      onLine?.(row.map(copyText).join('\t'))
      const record: Record<string, unknown> = {}
      columns.forEach((column, i) => {
        const value = row[i]
        record[column] = typeof value === 'bigint' ? value.toString() : value
      })
      batch.push(record)
      count += 1
      if (batch.length >= batchRows) await flush()
    }
    await flush()
  })
  return count
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe identifier ${name}`)
  return `"${name}"`
}

/** knex-style `?` placeholders to pg's `$n`. */
function toPgSql(sql: string): string {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}
