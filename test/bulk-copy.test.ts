import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { bulkWriteText, copyOut, copyOutText } from '../db/bulk.ts'
import { type DbHandle, openDb } from '../db/index.ts'
import { createTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()

/** COPY text of `n` rows (id, a text with the characters COPY escapes, a null, a 30-digit number). */
function rowsText(n: number, from = 0): string {
  let text = ''
  for (let i = from; i < from + n; i++) text += `${i}\tline\\tone\\\\two ${i}\t\\N\t${'9'.repeat(30)}${i}\n`
  return text
}

const TABLE = 'create table copied (id int primary key, label text, nothing text, amount numeric(78,0))'

for (const backend of ['postgres', 'pglite'] as const) {
  describe.runIf(backend === 'pglite' || pgOk)(`COPY text in and out on ${backend} (db/bulk.ts)`, () => {
    let database: { url: string; drop: () => Promise<void> } | undefined
    let dbh: DbHandle
    beforeAll(async () => {
      if (backend === 'postgres') {
        database = await createTestDatabase()
        // a pool of two: a connection left mid-COPY would starve it at once
        dbh = await openDb({ databaseUrl: database.url, poolMax: 2 })
      } else {
        // PGlite: INSERT batches into a stage table moved in at the end, reads through a cursor
        dbh = await openDb({})
      }
      await dbh.db.raw(TABLE)
    })
    afterAll(async () => {
      await dbh?.close()
      await database?.drop()
    })

    test('behavior: lines written in chunks read back byte for byte, escapes and nulls included', async () => {
      const text = rowsText(5_000)
      const chunks = text.match(/(?:[^\n]*\n){1,700}/g) as string[]
      const written = await bulkWriteText(dbh.db, 'copied', ['id', 'label', 'nothing', 'amount'], chunks, {
        sql: 'delete from copied where id >= ?',
        bindings: [0],
      })
      expect(written).toBe(5_000)
      expect(await copyOutText(dbh.db, 'select * from copied order by id')).toBe(text)
      const [row] = await dbh.db('copied').where({ id: 7 })
      expect(row).toEqual({ id: 7, label: 'line\tone\\two 7', nothing: null, amount: `${'9'.repeat(30)}7` })
    })

    test('behavior: a bad line writes nothing (one transaction); the prelude ran in it and is undone too', async () => {
      const before = await dbh.db('copied').count<{ n: string }[]>({ n: '*' })
      await expect(
        bulkWriteText(
          dbh.db,
          'copied',
          ['id', 'label', 'nothing', 'amount'],
          [rowsText(10, 10_000), 'x\ty\n'],
          {
            sql: 'delete from copied where id < ?',
            bindings: [100],
          },
        ),
      ).rejects.toThrow()
      expect(await dbh.db('copied').count<{ n: string }[]>({ n: '*' })).toEqual(before)
    })

    test('behavior: a read abandoned mid-stream gives its connection up; the pool keeps working', async () => {
      for (let round = 0; round < 3; round++) {
        const out = await copyOut(dbh.db, 'select * from copied order by id')
        for await (const text of out.texts) {
          expect(text.endsWith('\n')).toBe(true)
          break
        }
        await out.close()
      }
      // every pooled connection serves queries and whole reads again
      const [a, b] = await Promise.all([
        copyOutText(dbh.db, 'select id from copied order by id limit 3'),
        dbh.db.raw('select 1 as one'),
      ])
      expect(a).toBe('0\n1\n2\n')
      expect(b.rows).toEqual([{ one: 1 }])
    }, 30_000)

    test('behavior: control characters COPY TO escapes, empty texts and nulls read back as COPY writes them', async () => {
      await dbh.db('copied').insert([
        { id: 90_001, label: 'bs\bff\fvt\vcr\rnl\ntab\tslash\\', nothing: '', amount: null },
        { id: 90_002, label: '', nothing: null, amount: '0' },
      ])
      expect(await copyOutText(dbh.db, 'select * from copied where id > 90000 order by id')).toBe(
        '90001\tbs\\bff\\fvt\\vcr\\rnl\\ntab\\tslash\\\\\t\t\\N\n90002\t\t\\N\t0\n',
      )
      await dbh.db('copied').where('id', '>', 90_000).delete()
    })
  })
}
