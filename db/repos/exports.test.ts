import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type DbHandle, migrate, openDb } from '../index.ts'
import type { StoredExportSpec } from './exports.ts'
import { createRepos, type Repos } from './index.ts'

const SPEC: StoredExportSpec = {
  accountIds: null,
  from: '2026-04-01',
  to: '2026-06-30',
  granularity: 'quarter',
  currency: null,
  kind: 'journal',
  apiVersion: 'v1',
  format: 'csv',
}

describe('createExportsRepo (PGlite)', () => {
  let dbh: DbHandle
  let repos: Repos
  let orgId: string
  beforeAll(async () => {
    dbh = await openDb({})
    await migrate(dbh.db)
    repos = createRepos(dbh.db)
    orgId = (await repos.orgs.create({ name: 'exports', canAllowlist: false })).id
  })
  afterAll(() => dbh?.close())

  const newExport = (id: string) => repos.exports.create({ id, orgId, chainId: 1, clientId: 'c', spec: SPEC })

  test('behavior: chunks stream back in order across pages; a retried build starts its file over; another organization finds nothing', async () => {
    const id = '00000000-0000-4000-8000-000000000001'
    const row = await newExport(id)
    expect([row.state, row.spec]).toEqual(['queued', SPEC])
    expect(await repos.exports.get('org_other', id)).toBeUndefined()
    expect(await repos.exports.get(orgId, 'not-a-uuid')).toBeUndefined()
    expect(await repos.exports.start(id, 1)).toBe(true)
    for (let seq = 0; seq < 3; seq++) await repos.exports.appendChunk(id, seq, Buffer.from(`stale${seq}`))
    // the retry: state running again, the first attempt's chunks gone
    expect(await repos.exports.start(id, 2)).toBe(true)
    const parts = Array.from({ length: 10 }, (_, i) => Buffer.from(`part-${i};`))
    for (const [seq, data] of parts.entries()) await repos.exports.appendChunk(id, seq, data)
    const read: Buffer[] = []
    for await (const c of repos.exports.chunks(id)) read.push(c)
    expect(Buffer.concat(read).toString()).toBe(Buffer.concat(parts).toString())
    const done = await repos.exports.complete(id, { rows: 10, bytes: 70, sha256: 'ab' }, 60_000)
    expect([done.state, done.attempts, done.bytes]).toEqual(['completed', 2, '70'])
    expect(done.expires_at!.getTime() - done.completed_at!.getTime()).toBe(60_000)
    // a finished export is not started again (a late duplicate job does nothing)
    expect(await repos.exports.start(id, 3)).toBe(false)
    expect((await repos.exports.unfinished(10)).map((r) => r.id)).not.toContain(id)
  })

  test('behavior: a failed export keeps its error and no chunks; expired exports are deleted with their files', async () => {
    const id = '00000000-0000-4000-8000-000000000002'
    await newExport(id)
    expect((await repos.exports.unfinished(10)).map((r) => r.id)).toContain(id)
    await repos.exports.start(id, 1)
    await repos.exports.appendChunk(id, 0, Buffer.from('x'))
    await repos.exports.fail(id, 'the builder broke', 0)
    const failed = await repos.exports.get(orgId, id)
    expect([failed?.state, failed?.error]).toEqual(['failed', 'the builder broke'])
    expect(await dbh.db('export_chunks').where({ export_id: id }).count({ n: '*' })).toEqual([{ n: '0' }])
    expect(await repos.exports.deleteExpired(100)).toBeGreaterThanOrEqual(1)
    expect(await repos.exports.get(orgId, id)).toBeUndefined()
  })
})
