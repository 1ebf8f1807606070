import { randomUUID } from 'node:crypto'
import knex from 'knex'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { migratedTestDatabase, postgresAvailable } from '../../test/helpers/services.ts'
import { type DbHandle, migrate, openDb } from '../index.ts'
import { createRepos, inTransaction, type Repos } from './index.ts'

const pgOk = await postgresAvailable()

const BACKENDS = [
  {
    name: 'PGlite',
    available: true,
    open: async (): Promise<DbHandle> => {
      const dbh = await openDb({})
      await migrate(dbh.db)
      return dbh
    },
  },
  { name: 'Postgres', available: pgOk, open: (): Promise<DbHandle> => migratedTestDatabase() },
]

for (const backend of BACKENDS) {
  describe.runIf(backend.available)(`inTransaction (${backend.name})`, () => {
    let dbh: DbHandle
    beforeAll(async () => {
      dbh = await backend.open()
    })
    afterAll(async () => {
      await dbh?.close()
    })

    test('behavior: what repositories write inside is committed when the work resolves', async () => {
      const org = await inTransaction(dbh.db, async (repos) => {
        const created = await repos.orgs.create({ name: 'committed', canAllowlist: false })
        await repos.accounts.insert({ id: randomUUID(), orgId: created.id, key: 'kept' })
        return created
      })
      const repos = createRepos(dbh.db)
      expect(await repos.orgs.get(org.id)).toEqual(org)
      expect((await repos.accounts.list(org.id, { offset: 0, limit: 10 })).rows.map((a) => a.key)).toEqual([
        'kept',
      ])
    })

    test('behavior: what repositories write inside is rolled back when the work throws', async () => {
      const failure = new Error('stop after the writes')
      let orgId = ''
      await expect(
        inTransaction(dbh.db, async (repos, tx) => {
          const org = await repos.orgs.create({ name: 'rolled back', canAllowlist: false })
          orgId = org.id
          await repos.accounts.insert({ id: randomUUID(), orgId, key: 'gone' })
          // the transaction sees its own writes, through the repositories and through the raw tx alike
          expect((await repos.accounts.list(orgId, { offset: 0, limit: 10 })).rows.map((a) => a.key)).toEqual(
            ['gone'],
          )
          expect(await tx('orgs').where({ id: orgId }).first()).toMatchObject({ name: 'rolled back' })
          // another connection does not (PGlite has a single connection, which the transaction holds)
          if (backend.name === 'Postgres') expect(await createRepos(dbh.db).orgs.get(orgId)).toBeUndefined()
          throw failure
        }),
      ).rejects.toBe(failure)
      expect(orgId).not.toBe('')
      const repos = createRepos(dbh.db)
      expect(await repos.orgs.get(orgId)).toBeUndefined()
      expect((await repos.accounts.list(orgId, { offset: 0, limit: 10 })).rows).toEqual([])
    })
  })
}

describe('createRepos', () => {
  // a real knex handle; nothing here queries it
  const db = knex({ client: 'pg' })
  afterAll(() => db.destroy())
  const NAMES = [
    'orgs',
    'clients',
    'accounts',
    'wallets',
    'audit',
    'allowlistChanges',
    'discounts',
    'solAllowlist',
    'chain',
    'redemptions',
    'days',
    'records',
    'reports',
    'webhooks',
  ] as const satisfies readonly (keyof Repos)[]

  test('behavior: each repository is built once per Repos object and shared by its accesses', () => {
    const repos = createRepos(db)
    for (const name of NAMES) expect(repos[name]).toBe(repos[name])
    expect(createRepos(db).accounts).not.toBe(repos.accounts)
  })

  test('behavior: making Repos and using one repository costs far less than using all of them (built on first access)', () => {
    /** Best of 7 rounds of 2,000 fresh Repos, each touched by `use`, in ms. */
    const cost = (use: (repos: Repos) => unknown) => {
      let best = Number.POSITIVE_INFINITY
      for (let round = 0; round < 7; round++) {
        const start = performance.now()
        for (let i = 0; i < 2000; i++) use(createRepos(db))
        best = Math.min(best, performance.now() - start)
      }
      return best
    }
    const one = (repos: Repos) => repos.orgs
    const all = (repos: Repos) => NAMES.map((name) => repos[name])
    cost(one)
    cost(all)
    // built eagerly, both would pay for the fourteen factories: the same cost
    expect(cost(all)).toBeGreaterThan(cost(one) * 3)
  })
})
