import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { bulkWriteText, copyOut } from '../db/bulk.ts'
import { type DbHandle, openDb } from '../db/index.ts'
import { PGLITE_COPY_CHUNK, PGLITE_FETCH_ROWS } from '../db/pglite-bulk.ts'

/**
 * PGlite has one connection: a statement the API issues while the day writes or reads in bulk waits for it.
 * These hold the order, not a time: a statement queued while a bulk write's (or read's) statement runs goes
 * before that write's (or read's) next one, and sees none of the write's rows until they all land.
 */

const COLUMNS = ['id', 'label']
/** A label long enough that a few rows fill a chunk of a bulk write. */
const LABEL = 'x'.repeat(2_000)
/** Rows of a bulk write a few chunks long. */
const ROWS = Math.ceil((PGLITE_COPY_CHUNK * 3.5) / LABEL.length)

/** COPY text lines `from` .. `from + n - 1`. */
const lines = (n: number, from = 0, label = LABEL) =>
  Array.from({ length: n }, (_, i) => `${from + i}\t${label}\n`).join('')

/** What each statement is, in the order they reach the database. */
function statementLog(dbh: DbHandle) {
  const log: string[] = []
  const listeners: ((sql: string) => void)[] = []
  dbh.db.on('query', (q: { sql: string }) => {
    const sql = q.sql.toLowerCase()
    // a piece of a bulk write: a COPY chunk into the stage (an INSERT batch before)
    const kind = /^(insert into .* values |copy .* from '\/dev\/blob')/.test(sql)
      ? 'piece'
      : sql.startsWith('fetch forward')
        ? 'fetch'
        : sql.startsWith('select count(*)')
          ? 'read'
          : sql.split(' ').slice(0, 2).join(' ')
    log.push(kind)
    for (const listener of listeners) listener(kind)
  })
  return { log, on: (listener: (kind: string) => void) => listeners.push(listener) }
}

describe('bulk writes and reads on PGlite leave room for other statements (db/pglite-bulk.ts)', () => {
  let dbh: DbHandle
  beforeAll(async () => {
    dbh = await openDb({})
    await dbh.db.raw('create table written (id int primary key, label text not null)')
  })
  afterAll(async () => {
    await dbh?.close()
  })

  test('behavior: a read queued during a bulk write runs before the write’s next piece, and sees none of its rows', async () => {
    await dbh.db('written').delete()
    const statements = statementLog(dbh)
    let read: Promise<{ n: string }[]> | undefined
    statements.on((kind) => {
      // issued while the write's first piece holds the connection
      // (`then` sends it now: a knex query runs when awaited)
      if (kind === 'piece' && !read)
        read = dbh
          .db('written')
          .count<{ n: string }[]>({ n: '*' })
          .then((rows) => rows)
    })
    const written = await bulkWriteText(dbh.db, 'written', COLUMNS, [lines(ROWS)], {
      sql: 'delete from written where id >= ?',
      bindings: [0],
    })
    expect(written).toBe(ROWS)
    expect(await read).toEqual([{ n: '0' }])
    const log = statements.log.filter((kind) => kind === 'piece' || kind === 'read')
    expect(log.indexOf('read')).toBe(1)
    expect(log.slice(2).every((kind) => kind === 'piece')).toBe(true)
    expect(log.length).toBeGreaterThanOrEqual(5)
    // the rows land together, after the pieces: one transaction runs the prelude, the move, the commit
    const tail = statements.log.slice(statements.log.lastIndexOf('piece') + 1)
    expect(tail.slice(0, 4)).toEqual(['begin;', 'delete from', 'insert into', 'commit;'])
    expect(await dbh.db('written').count<{ n: string }[]>({ n: '*' })).toEqual([{ n: String(written) }])
  })

  test('behavior: a failed bulk write leaves nothing, its prelude undone, and the next one writes', async () => {
    await dbh.db('written').delete()
    await bulkWriteText(dbh.db, 'written', COLUMNS, [lines(10)])
    // a duplicate key: the pieces are staged, the move fails, the prelude's delete is undone with it
    await expect(
      bulkWriteText(dbh.db, 'written', COLUMNS, [lines(ROWS, 100), lines(1, 100)], {
        sql: 'delete from written where id < ?',
        bindings: [5],
      }),
    ).rejects.toThrow(/duplicate key/)
    expect(await dbh.db('written').count<{ n: string }[]>({ n: '*' })).toEqual([{ n: '10' }])
    expect(await bulkWriteText(dbh.db, 'written', COLUMNS, [lines(3, 500)])).toBe(3)
    expect(await dbh.db('written').count<{ n: string }[]>({ n: '*' })).toEqual([{ n: '13' }])
  })

  test('behavior: a read queued during a bulk read (copyOut) runs before its next page', async () => {
    await dbh.db('written').delete()
    await bulkWriteText(dbh.db, 'written', COLUMNS, [lines(PGLITE_FETCH_ROWS * 2 + 1, 0, 'row')])
    const statements = statementLog(dbh)
    let read: Promise<unknown> | undefined
    statements.on((kind) => {
      if (kind === 'fetch' && !read)
        read = dbh
          .db('written')
          .count({ n: '*' })
          .then((rows) => rows)
    })
    const out = await copyOut(dbh.db, 'select id, label from written order by id')
    let text = ''
    try {
      for await (const part of out.texts) text += part
    } finally {
      await out.close()
    }
    await read
    expect(text).toBe(lines(PGLITE_FETCH_ROWS * 2 + 1, 0, 'row'))
    expect(statements.log.filter((kind) => kind === 'fetch' || kind === 'read')).toEqual([
      'fetch',
      'read',
      'fetch',
      'fetch',
    ])
  })
})
