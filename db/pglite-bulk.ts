import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Knex } from 'knex'
import type pg from 'pg'
import { type BulkPrelude, type CopyOut, pgliteOf } from './bulk.ts'
import type { Db } from './index.ts'

/**
 * Bulk writes and reads on PGlite, which has one connection (a single backend) and runs on the main thread:
 * every statement of the process queues for it, and a transaction keeps it until its end. So the day's big
 * writes and reads are cut into short statements, each on the connection only while it runs: a statement
 * the API queued meanwhile (knex's pool serves waiters in order) runs before the next piece. Measured on a
 * 100k-holder day (bench/README.md): a shard job's INSERT batches held the connection in one transaction for
 * 27-41 s, and its read of the previous day's rows was one statement of 3-4 s.
 */

/**
 * Text per COPY of a bulk write (~45 rows of `wallet_records`): each chunk is one statement on the main
 * thread (PGlite is WebAssembly in this process), a few ms on a quiet machine, the longest the API waits for
 * the event loop because of one. COPY costs ~45 µs a row of `wallet_records` in chunks this size, an INSERT
 * batch ~190 µs (measured).
 */
export const PGLITE_COPY_CHUNK = 32 * 1024

/** Rows per FETCH of a `pgliteCopyOut` read (each fetch a statement on the main thread, like a chunk). */
export const PGLITE_FETCH_ROWS = 200

/** Stage tables of a database: the free ones by table and columns, and a counter naming new ones. */
interface Stages {
  free: Map<string, string[]>
  made: number
}
const stagesOf = new WeakMap<Knex, Stages>()

/** A stage table of `table`'s `columns` (types only, no constraint) for one write; free again when released. */
async function takeStage(db: Db, table: string, columns: readonly string[]) {
  const stages = stagesOf.get(db) ?? { free: new Map(), made: 0 }
  stagesOf.set(db, stages)
  const signature = `${table}(${columns.join(',')})`
  const name = stages.free.get(signature)?.pop() ?? `lsreport_stage_${++stages.made}`
  // a temporary table: the session's (PGlite's only one), gone with it; made once, emptied after each use
  await db.raw(
    `create temp table if not exists ${name} as select ${columns.map(quoteIdent).join(', ')} from ${quoteIdent(table)} with no data`,
  )
  return {
    name,
    /** Empties the stage for the next write; one that cannot be emptied is not used again. */
    async release() {
      try {
        await db.raw(`truncate ${name}`)
      } catch {
        return
      }
      stages.free.set(signature, [...(stages.free.get(signature) ?? []), name])
    },
  }
}

/**
 * COPY text (whole lines) into `table` of `db` from a blob, a statement on a connection of the pool (so no
 * other statement runs meanwhile, the blob is this one's): PGlite reads `/dev/blob` from the blob it is
 * handed. Returns the rows copied.
 */
async function copyFromBlob(db: Db, table: string, list: string, text: string): Promise<number> {
  const pglite = pgliteOf(db)
  const conn = await db.client.acquireConnection()
  try {
    await pglite._handleBlob(new Blob([text]))
    const result = await db.raw(`copy ${table} (${list}) from '/dev/blob'`).connection(conn)
    return Number(result.rowCount)
  } finally {
    await pglite._cleanupBlob()
    await db.client.releaseConnection(conn)
  }
}

/**
 * `bulkWrite` / `bulkWriteText` on PGlite: the lines (`texts`: whole lines, each ending in a newline; the last
 * may end without) are COPY'd into a stage table `PGLITE_COPY_CHUNK` at a time, each chunk its own statement
 * (with a turn of the event loop after it), so the connection is free between chunks; then one transaction
 * runs `prelude`, moves the rows into `table` (`insert ... select`, inside the database) and runs
 * `epilogue`. Either every row lands or none does, as with COPY on Postgres; values are checked by their
 * types as they are staged, constraints when they are moved. Returns the rows written.
 */
export async function pgliteCopyIn(
  db: Db,
  table: string,
  columns: readonly string[],
  texts: AsyncIterable<string> | Iterable<string>,
  prelude: BulkPrelude | undefined,
  epilogue?: (rows: number) => BulkPrelude,
): Promise<number> {
  const list = columns.map(quoteIdent).join(', ')
  const stage = await takeStage(db, table, columns)
  let count = 0
  try {
    let pending = ''
    for await (const text of texts as AsyncIterable<string>) {
      pending += text
      while (pending.length >= PGLITE_COPY_CHUNK) {
        // whole lines of about a chunk (one longer line alone)
        const end = pending.lastIndexOf('\n', PGLITE_COPY_CHUNK - 1) + 1 || pending.indexOf('\n') + 1
        if (end === 0) break
        count += await copyFromBlob(db, stage.name, list, pending.slice(0, end))
        pending = pending.slice(end)
        await nextTurn()
      }
    }
    if (pending !== '')
      count += await copyFromBlob(db, stage.name, list, pending.endsWith('\n') ? pending : `${pending}\n`)
    await db.transaction(async (tx) => {
      if (prelude) await tx.raw(prelude.sql, [...prelude.bindings])
      await tx.raw(`insert into ${quoteIdent(table)} (${list}) select ${list} from ${stage.name}`)
      if (epilogue) {
        const statement = epilogue(count)
        await tx.raw(statement.sql, [...statement.bindings])
      }
    })
    return count
  } finally {
    await stage.release()
  }
}

// COPY TO's escapes (the docs' list: it writes these control characters as sequences, never in octal)
const COPY_OUT_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
}
const COPY_OUT_SPECIAL = /[\\\b\f\n\r\t\v]/
const COPY_OUT_SPECIALS = /[\\\b\f\n\r\t\v]/g

/** A value as Postgres's text output gives it, as COPY TO writes it (null is `\N`). */
function copyOutField(value: string | null): string {
  if (value === null) return '\\N'
  return COPY_OUT_SPECIAL.test(value)
    ? value.replace(COPY_OUT_SPECIALS, (c) => COPY_OUT_ESCAPES[c] as string)
    : value
}

/** Every value as the server's text (no parsing): what COPY TO writes, before its escapes. */
const RAW_TEXT = { getTypeParser: () => (value: string) => value }

let cursors = 0

/**
 * `copyOut` on PGlite (no COPY TO STDOUT through its adapter): the query's rows are held by a cursor (`WITH
 * HOLD`: the result is made in the database when it is declared) and fetched `PGLITE_FETCH_ROWS` at a time
 * as the texts are read, each fetch a statement of its own: the connection is free between them. The texts
 * are byte for byte what COPY TO writes on Postgres. `close()` closes the cursor.
 */
export async function pgliteCopyOut(db: Db, sql: string): Promise<CopyOut> {
  const cursor = `lsreport_out_${++cursors}`
  await db.raw(`declare ${cursor} no scroll cursor with hold for ${sql}`)
  let closed = false
  async function* texts(): AsyncGenerator<string> {
    for (;;) {
      if (closed) return
      const result: pg.QueryArrayResult<(string | null)[]> = await db
        .raw(`fetch forward ${PGLITE_FETCH_ROWS} from ${cursor}`)
        .options({ rowMode: 'array', types: RAW_TEXT })
      let text = ''
      for (const row of result.rows) text += `${row.map(copyOutField).join('\t')}\n`
      if (text !== '') yield text
      if (result.rows.length < PGLITE_FETCH_ROWS) return
    }
  }
  return {
    texts: texts(),
    async close() {
      if (closed) return
      closed = true
      await db.raw(`close ${cursor}`)
    },
  }
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe identifier ${name}`)
  return `"${name}"`
}
