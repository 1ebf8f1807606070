import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Address } from '../common/address.ts'
import { runs } from '../fixtures/property-runs.ts'
import { createTestDatabase, postgresAvailable } from '../test/helpers/services.ts'
import { type DbHandle, migrate, openDb } from './index.ts'
import { createRepos } from './repos/index.ts'
import { WALLET_VIEW_FIELDS } from './repos/wallets.ts'
import { arrayLiteral, namedStatement } from './statements.ts'

describe('namedStatement', () => {
  test('edge: a statement selecting * is refused when it is made; count(*) is fine', () => {
    expect(() => namedStatement('a', 'select * from wallets')).toThrow(/name its columns/)
    expect(() => namedStatement('b', 'select w.*, 1 from wallets w')).toThrow(/name its columns/)
    expect(() => namedStatement('c', 'select count(*) as n from wallets where address = ?')).not.toThrow()
  })
})

const pgOk = await postgresAvailable()
const BACKENDS = [
  {
    name: 'PGlite',
    available: true,
    open: async () => {
      const dbh = await openDb({})
      await migrate(dbh.db)
      return { dbh, drop: async () => {} }
    },
  },
  {
    name: 'Postgres',
    available: pgOk,
    open: async () => {
      const database = await createTestDatabase()
      // one connection: every call below reuses the one that prepared the statement
      const dbh = await openDb({ databaseUrl: database.url, poolMax: 1 })
      await migrate(dbh.db)
      return { dbh, drop: database.drop }
    },
  },
]

for (const backend of BACKENDS) {
  describe.runIf(backend.available)(`named statements (${backend.name})`, () => {
    let dbh: DbHandle
    let drop: () => Promise<void>
    beforeAll(async () => {
      ;({ dbh, drop } = await backend.open())
    })
    afterAll(async () => {
      await dbh?.close()
      await drop?.()
    })

    test('property: an array literal binds any list of strings exactly', async () => {
      const echo = namedStatement('lsreport_test_echo', 'select unnest(?::text[]) as value')
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.string({ unit: 'grapheme' }).filter((v) => !v.includes('\u0000'))),
          async (values) => {
            const rows = await echo.rows<{ value: string }>(dbh.db, [arrayLiteral(values)])
            expect(rows.map((r) => r.value)).toEqual(values)
          },
        ),
        { numRuns: runs(100) },
      )
    })

    test('behavior: the named reads give every column of their tables (a column added later joins their lists)', async () => {
      const repos = createRepos(dbh.db)
      const org = await repos.orgs.create({ name: 'columns', canAllowlist: true })
      const account = await repos.accounts.insert({ id: randomUUID(), orgId: org.id, key: 'k' })
      const address = '0x00000000000000000000000000000000000000ab' as Address
      await repos.wallets.insert({
        id: randomUUID(),
        account_id: account.id,
        org_id: org.id,
        originator_org_id: org.id,
        address,
        type: 'ETH',
        status: 'NOT_ALLOWLISTED',
        wants_allowlist: false,
        on_platform: true,
      })
      const columns = async (table: string) =>
        (await dbh.db('information_schema.columns').select('column_name').where({ table_name: table })).map(
          (c: { column_name: string }) => c.column_name,
        )
      const wallet = await repos.wallets.findByIdOrAddress(org.id, address)
      expect(Object.keys(wallet ?? {}).sort()).toEqual((await columns('wallets')).sort())
      expect(Object.keys((await repos.wallets.listByAccounts([account.id]))[0] ?? {}).sort()).toEqual(
        (await columns('wallets')).sort(),
      )
      // the presented wallets: exactly the view's fields, each a column
      const [view] = await repos.wallets.viewsByAccounts([account.id])
      expect(Object.keys(view ?? {}).sort()).toEqual([...WALLET_VIEW_FIELDS].sort())
      expect(await columns('wallets')).toEqual(expect.arrayContaining([...WALLET_VIEW_FIELDS]))
      expect(view).toEqual(Object.fromEntries(WALLET_VIEW_FIELDS.map((f) => [f, wallet?.[f]])))
      const page = await repos.wallets.list(org.id, {}, { offset: 0, limit: 10 })
      expect(page).toEqual({ rows: [view], total: 1 })
      const found = await repos.accounts.findByIdOrKey(org.id, 'k')
      expect(Object.keys(found ?? {}).sort()).toEqual((await columns('accounts')).sort())
    })

    test('behavior: the named reads keep working on their connection after a migration adds columns', async () => {
      const repos = createRepos(dbh.db)
      const org = await repos.orgs.create({ name: 'named reads', canAllowlist: true })
      const account = await repos.accounts.insert({ id: randomUUID(), orgId: org.id, key: 'k' })
      const day = { chain_id: 1, report_epoch: '1', visible_version: 1 }
      const reads = async () => ({
        records: await repos.reports.walletRecordsOnDays([day], ['0xab']),
        byKey: (await repos.accounts.findByIdOrKey(org.id, 'k'))?.id,
        byId: (await repos.accounts.findByIdOrKey(org.id, account.id))?.id,
        wallet: await repos.wallets.findByIdOrAddress(org.id, '0xab'),
        walletById: await repos.wallets.findByIdOrAddress(org.id, randomUUID()),
        wallets: await repos.wallets.listByAccounts([account.id]),
        views: await repos.wallets.viewsByAccounts([account.id]),
      })
      const before = await reads()
      expect(before).toEqual({
        records: { current: [false], rows: [] },
        byKey: account.id,
        byId: account.id,
        wallet: undefined,
        walletById: undefined,
        wallets: [],
        views: [],
      })
      for (const table of ['wallet_records', 'days', 'wallets', 'accounts']) {
        await dbh.db.raw(`alter table ${table} add column added_by_a_later_migration text`)
      }
      expect(await reads()).toEqual(before)
    })
  })
}
