import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ValidationError } from '../common/errors.ts'
import { type DbHandle, migrate, openDb } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { createDelegations, impersonationAllowed, mayImpersonate } from './delegations.ts'

describe('impersonationAllowed', () => {
  test('behavior: allowed only toward an existing organization that delegated, or from an operator org', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), fc.boolean(), (targetExists, callerOperator, delegated) => {
        const allowed = impersonationAllowed({ targetExists, callerOperator, delegated })
        expect(allowed).toBe(targetExists && (callerOperator || delegated))
      }),
    )
  })

  test('behavior: an unknown organization is refused even to an operator org', () => {
    expect(impersonationAllowed({ targetExists: false, callerOperator: true, delegated: false })).toBe(false)
  })
})

describe('createDelegations (PGlite)', () => {
  let dbh: DbHandle
  beforeAll(async () => {
    dbh = await openDb({})
    await migrate(dbh.db)
  })
  afterAll(async () => {
    await dbh?.close()
  })

  test('behavior: delegate and undelegate change what mayImpersonate answers, each change audited once', async () => {
    const repos = createRepos(dbh.db)
    const a = await repos.orgs.create({ name: 'A', canAllowlist: true })
    const desk = await repos.orgs.create({ name: 'desk', canAllowlist: false })
    const delegations = createDelegations(dbh.db)

    expect(await mayImpersonate(repos, desk.id, a.id)).toBe(false)
    expect(await mayImpersonate(repos, desk.id, 'org_doesnotexist')).toBe(false)
    expect(await mayImpersonate(repos, desk.id, desk.id)).toBe(true) // reading as oneself

    expect(await delegations.delegate(a.id, desk.id, 'operator')).toEqual({
      org_id: a.id,
      delegate_org_id: desk.id,
      delegated: true,
      changed: true,
    })
    expect((await delegations.delegate(a.id, desk.id, 'operator')).changed).toBe(false)
    expect(await mayImpersonate(repos, desk.id, a.id)).toBe(true)
    // one direction only: A did not become able to read as the desk
    expect(await mayImpersonate(repos, a.id, desk.id)).toBe(false)
    expect(await delegations.delegatesOf(a.id)).toEqual([desk.id])

    expect((await delegations.undelegate(a.id, desk.id, 'operator')).changed).toBe(true)
    expect((await delegations.undelegate(a.id, desk.id, 'operator')).changed).toBe(false)
    expect(await mayImpersonate(repos, desk.id, a.id)).toBe(false)

    const changes = await repos.delegations.changesOf(a.id)
    expect(changes.map((c) => [c.action, c.delegate_org_id, c.actor])).toEqual([
      ['delegate', desk.id, 'operator'],
      ['undelegate', desk.id, 'operator'],
    ])
    expect(changes.every((c) => c.created_at instanceof Date)).toBe(true)
  })

  test('behavior: an operator organization may read as any existing organization, without delegation', async () => {
    const repos = createRepos(dbh.db)
    const a = await repos.orgs.create({ name: 'A', canAllowlist: true })
    const ops = await repos.orgs.create({ name: 'ops', canAllowlist: false, operator: true })
    expect(ops.operator).toBe(true)
    expect(a.operator).toBe(false)
    expect(await mayImpersonate(repos, ops.id, a.id)).toBe(true)
    expect(await mayImpersonate(repos, ops.id, 'org_doesnotexist')).toBe(false)
    expect(await mayImpersonate(repos, a.id, ops.id)).toBe(false)
  })

  test('behavior: unknown organizations and self-delegation are refused with a message naming the flag', async () => {
    const repos = createRepos(dbh.db)
    const a = await repos.orgs.create({ name: 'A', canAllowlist: true })
    const delegations = createDelegations(dbh.db)
    await expect(delegations.delegate(a.id, 'org_nope', 'operator')).rejects.toThrow(/--to: org "org_nope"/)
    await expect(delegations.delegate('org_nope', a.id, 'operator')).rejects.toThrow(/--org: org "org_nope"/)
    await expect(delegations.delegate(a.id, a.id, 'operator')).rejects.toBeInstanceOf(ValidationError)
    expect(await repos.delegations.changesOf(a.id)).toEqual([])
  })
})
