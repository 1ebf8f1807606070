import { afterAll, describe, expect, test } from 'vitest'
import { createTestDatabase, postgresAvailable } from '../test/helpers/services.ts'
import { createExclusive } from './exclusive.ts'
import { type DbHandle, openDb } from './index.ts'

const pgOk = await postgresAvailable()
const KEY = [0x74657374, 1] as const
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

/** A promise and its resolver: work that holds the lock until the test lets it go. */
function gate() {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open, opened }
}

const tick = () => new Promise((r) => setTimeout(r, 50))

describe('createExclusive', () => {
  test('behavior: in one process, a second caller skips or waits while the first runs (PGlite)', async () => {
    const dbh = await openDb({})
    cleanups.push(() => dbh.close())
    const alone = createExclusive(dbh.db, KEY)
    const order: string[] = []
    const g = gate()
    const first = alone(async () => {
      order.push('first start')
      await g.opened
      order.push('first end')
      return 1
    }, 'wait')
    await tick()
    expect(await alone(async () => 2, 'skip')).toBeUndefined()
    const second = alone(async () => {
      order.push('second')
      return 3
    }, 'wait')
    await tick()
    expect(order).toEqual(['first start'])
    g.open()
    expect([await first, await second]).toEqual([1, 3])
    expect(order).toEqual(['first start', 'first end', 'second'])
    // a failing run releases the lock
    await expect(alone(async () => Promise.reject(new Error('boom')), 'wait')).rejects.toThrow('boom')
    expect(await alone(async () => 4, 'skip')).toBe(4)
  })

  test.runIf(pgOk)(
    'behavior: across processes (two pools on one Postgres), a holder excludes the others until it ends or its connection dies',
    async () => {
      const database = await createTestDatabase()
      cleanups.push(database.drop)
      const handles: DbHandle[] = []
      for (let i = 0; i < 3; i++) {
        const dbh = await openDb({ databaseUrl: database.url })
        handles.push(dbh)
        cleanups.push(() => dbh.close())
      }
      const [a, b, c] = handles.map((h) => createExclusive(h.db, KEY))
      const order: string[] = []
      const g = gate()
      const first = a!(async () => {
        order.push('a start')
        await g.opened
        order.push('a end')
      }, 'wait')
      await tick()
      expect(await b!(async () => 'b ran', 'skip')).toBeUndefined()
      const waiting = c!(async () => {
        order.push('c')
      }, 'wait')
      await tick()
      expect(order).toEqual(['a start'])
      g.open()
      await Promise.all([first, waiting])
      expect(order).toEqual(['a start', 'a end', 'c'])
      expect(await b!(async () => 'b ran', 'skip')).toBe('b ran')

      // a holder whose connection the server ends (a dead process) frees the lock
      const stuck = gate()
      const held = a!(async () => stuck.opened, 'wait').catch((err: Error) => err)
      await tick()
      expect(await b!(async () => 'b ran', 'skip')).toBeUndefined()
      const [{ pid }] = (
        await handles[0]!.db.raw(
          `select pid from pg_locks where locktype = 'advisory' and classid = ? and objid = ? and granted`,
          [...KEY],
        )
      ).rows
      await handles[2]!.db.raw('select pg_terminate_backend(?)', [pid])
      expect(await b!(async () => 'b ran', 'wait')).toBe('b ran')
      stuck.open()
      expect(await held).toBeInstanceOf(Error)
    },
    30_000,
  )
})
