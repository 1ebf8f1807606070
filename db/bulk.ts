import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { PGlite } from '@electric-sql/pglite'
import type { Knex } from 'knex'
import type pg from 'pg'
import { from as copyFrom, to as copyTo } from 'pg-copy-streams'
import type { Db } from './index.ts'
import { pgliteCopyIn, pgliteCopyOut } from './pglite-bulk.ts'

/** A value of a bulk-written row: text, a number, a boolean, a bigint or null. */
export type BulkValue = string | number | boolean | bigint | null

const pgliteHandles = new WeakMap<Knex, PGlite>()

/**
 * Marks a knex handle as running on `pglite` (which has no COPY FROM STDIN through its pg adapter: bulk
 * writes COPY from a blob of its own, `pglite-bulk.ts`).
 */
export function markPglite(db: Knex, pglite: PGlite): void {
  pgliteHandles.set(db, pglite)
}

/** True when `db` runs on PGlite. */
export function isPglite(db: Knex): boolean {
  return pgliteHandles.has(db)
}

/** The PGlite instance under `db` (`markPglite`); throws for another database. */
export function pgliteOf(db: Knex): PGlite {
  const pglite = pgliteHandles.get(db)
  if (!pglite) throw new Error('not a PGlite database')
  return pglite
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
 * produced while the server ingests the previous ones, so computing overlaps writing), COPY into a stage
 * table on PGlite, a chunk a statement, moved in at the end (`pgliteCopyIn`). Either every row lands or none
 * does. Returns the number of rows written. `onLine`, when given, sees each row in COPY text format (no
 * newline) on both backends: a caller hashing its rows uses it rather than formatting every row a second
 * time.
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
  if (isPglite(db)) {
    async function* lines() {
      for await (const row of rows as AsyncIterable<BulkValue[]>) {
        const line = row.map(copyText).join('\t')
        onLine?.(line)
        yield `${line}\n`
      }
    }
    return pgliteCopyIn(db, table, columns, lines(), prelude)
  }
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

/**
 * Writes rows already formatted as COPY text (`chunks`: whole lines, each ending in a newline) into `table`
 * in one transaction, after `prelude` and before `epilogue` (a statement made from the number of rows once
 * they are written, e.g. recording what they were; it may throw to undo them): `COPY ... FROM STDIN` on
 * Postgres, COPY into a stage table a chunk at a time then moved in on PGlite (`pgliteCopyIn`). Either every
 * row lands or none does. Returns the number of rows written. A caller that formats its own lines (hashed as
 * they go) writes them with no value array per row. On Postgres the transaction takes
 * three round trips: BEGIN with the prelude, the COPY, the epilogue with COMMIT.
 *
 * @example
 * await bulkWriteText(db, 'wallet_records', columns, ['1\t2\n'], { sql: 'delete from wallet_records where ...', bindings })
 */
export async function bulkWriteText(
  db: Db,
  table: string,
  columns: readonly string[],
  chunks: AsyncIterable<string> | Iterable<string>,
  prelude?: BulkPrelude,
  epilogue?: (rows: number) => BulkPrelude,
): Promise<number> {
  if (isPglite(db)) return pgliteCopyIn(db, table, columns, chunks, prelude, epilogue)
  const conn = (await db.client.acquireConnection()) as pg.PoolClient
  // statements with their values written in (knex's quoting): several go in one simple query
  const literal = (statement: BulkPrelude) => db.raw(statement.sql, [...statement.bindings]).toQuery()
  try {
    await conn.query(prelude ? `BEGIN; ${literal(prelude)}` : 'BEGIN')
    const copy = conn.query(
      copyFrom(`COPY ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) FROM STDIN`),
    )
    await pipeline(Readable.from(chunks, { objectMode: false, highWaterMark: 256 * 1024 }), copy)
    await conn.query(epilogue ? `${literal(epilogue(Number(copy.rowCount)))}; COMMIT` : 'COMMIT')
    return Number(copy.rowCount)
  } catch (err) {
    await conn.query('ROLLBACK').catch(() => undefined)
    throw err
  } finally {
    await db.client.releaseConnection(conn)
  }
}

/** A query's rows streaming out in COPY text format (`copyOut`), on a connection of their own. */
export interface CopyOut {
  /** Texts of whole lines (each ends with a newline), in the query's order, read as they are consumed. */
  texts: AsyncIterable<string> | Iterable<string>
  /** Gives the connection back; one abandoned mid-stream is closed rather than reused. Call it always. */
  close(): Promise<void>
}

/**
 * Starts streaming a query's rows in COPY text format on a connection of the pool held until `close()`: a
 * caller writing other rows meanwhile reads these as it goes (the server formats them while the caller
 * computes). On PGlite (no COPY TO STDOUT through its adapter, one connection) the same texts come from a
 * cursor fetched a page at a time, the connection free between pages (`pgliteCopyOut`). `sql` is the query
 * inside `COPY (...) TO STDOUT`: COPY takes no bind parameters, so every value in it must be a checked
 * literal.
 * Read the texts with `createCopyRows` (db/copy-rows.ts): no object per row.
 *
 * @example
 * const out = await copyOut(db, 'select address, balance_lseth from wallet_records where version = 1')
 * try { for await (const text of out.texts) use(text) } finally { await out.close() }
 */
export async function copyOut(db: Db, sql: string): Promise<CopyOut> {
  if (isPglite(db)) return pgliteCopyOut(db, sql)
  const conn = (await db.client.acquireConnection()) as pg.PoolClient
  let stream: ReturnType<typeof copyTo>
  try {
    stream = conn.query(copyTo(`COPY (${sql}) TO STDOUT`))
  } catch (err) {
    await db.client.releaseConnection(conn)
    throw err
  }
  let done = false
  let closed = false
  async function* texts(): AsyncGenerator<string> {
    let carry = ''
    for await (const chunk of stream) {
      const text = carry + (chunk as Buffer).toString('latin1')
      const end = text.lastIndexOf('\n') + 1
      carry = text.slice(end)
      if (end > 0) yield text.slice(0, end)
    }
    if (carry !== '') yield carry
    done = true
  }
  return {
    texts: texts(),
    async close() {
      if (closed) return
      closed = true
      if (!done) {
        // a COPY left half-read leaves the connection mid-protocol: close it, the pool opens another
        ;(conn as unknown as { __knex__disposed?: string }).__knex__disposed = 'COPY TO abandoned'
        stream.destroy()
        await conn.end().catch(() => undefined)
      }
      await db.client.releaseConnection(conn)
    },
  }
}

/**
 * The rows of a query in COPY text format, as one string (Postgres only; see `copyOut` for the rules on
 * `sql`). For a bounded result: a large one streams through `copyOut` instead.
 *
 * @example
 * const text = await copyOutText(db, 'select * from lseth_transfers')
 */
export async function copyOutText(db: Db, sql: string): Promise<string> {
  const out = await copyOut(db, sql)
  try {
    let text = ''
    for await (const part of out.texts) text += part
    return text
  } finally {
    await out.close()
  }
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
