import { createHash } from 'node:crypto'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { DbHandle } from '../../db/index.ts'
import { createRepos, type Repos } from '../../db/repos/index.ts'
import { InvalidInputError } from '../../engine/index.ts'
import { createPlatformService } from '../../platform/service.ts'
import { migratedTestDatabase, postgresAvailable } from '../../test/helpers/services.ts'
import { buildExport, type ExportProgress, type ExportSpec, journalFields, recordsFields } from './build.ts'

const pgOk = await postgresAvailable()

/** The export builder's refusals and its empty file; test/statements.test.ts holds its figures to the API's. */
describe.runIf(pgOk)('buildExport (Postgres)', () => {
  let dbh: DbHandle
  let repos: Repos
  let orgId = ''

  beforeAll(async () => {
    dbh = await migratedTestDatabase()
    repos = createRepos(dbh.db)
    const org = await repos.orgs.create({ name: 'custodian', canAllowlist: true })
    orgId = org.id
    const platform = createPlatformService(dbh.db)
    await platform.createAccount(org.id, 'omnibus', 'test')
  })
  afterAll(async () => {
    await dbh?.close()
  })

  const spec = (over: Partial<ExportSpec> = {}): ExportSpec => ({
    chainId: 31337,
    orgId,
    accountIds: null,
    from: '2026-04-01',
    to: '2026-06-30',
    granularity: 'quarter',
    currency: null,
    kind: 'journal',
    apiVersion: 'v1',
    ...over,
  })

  async function build(s: ExportSpec) {
    const out = new PassThrough()
    const chunks: Buffer[] = []
    out.on('data', (c: Buffer) => chunks.push(c))
    const progress: ExportProgress[] = []
    const result = await buildExport(repos, s, out, (p) => progress.push(p))
    return { result, text: Buffer.concat(chunks).toString('utf8'), progress }
  }

  test.each([
    ['from after to', { from: '2026-07-01' }, /from must not be after to/],
    ['a bad date', { to: '2026-02-30' }, /date|to/],
    ['an unknown currency', { currency: 'gbp' }, /currency must be usd or eur/],
    ['an unknown granularity', { granularity: 'week' as never }, /granularity/],
    ['an unknown ledger account', { journalAccounts: { cash: 'Cash' } as never }, /unknown ledger account/],
  ])('behavior: %s is refused as bad input (not retried)', async (_what, over, message) => {
    const error = await build(spec(over)).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as Error).message).toMatch(message)
  })

  test.each([
    ['journal', journalFields('usd')],
    ['records', recordsFields({ apiVersion: 'v0', currency: 'usd' })],
  ] as const)('behavior: a %s export without records is its header alone', async (kind, fields) => {
    const { result, text, progress } = await build(spec({ kind, currency: 'usd', apiVersion: 'v0' }))
    expect(text).toBe(`${fields.join(',')}\r\n`)
    expect(result).toEqual({
      rows: 0,
      bytes: Buffer.byteLength(text),
      sha256: createHash('sha256').update(text).digest('hex'),
    })
    expect(progress.at(-1)).toEqual({ done: 1, total: 1 })
  })
})
