import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, test } from 'vitest'
import { migratedTestDatabase, postgresAvailable } from '../../test/helpers/services.ts'
import type { DbHandle } from '../index.ts'
import { createRepos, inTransaction } from './index.ts'

const pgOk = await postgresAvailable()
const handles: DbHandle[] = []
afterAll(async () => {
  for (const h of handles) await h.close()
})

describe.runIf(pgOk)('chainClock (Postgres)', () => {
  test('behavior: the follower cannot move the head past a registration until the registration is committed', async () => {
    const dbh = await migratedTestDatabase()
    handles.push(dbh)
    const repos = createRepos(dbh.db)
    await repos.chain.setHead(1, { number: 100n, time: new Date('2026-05-01T12:00:00Z') })
    const org = await repos.orgs.create({ name: 'clocked', canAllowlist: false })
    const accountId = randomUUID()
    await repos.accounts.insert({ id: accountId, orgId: org.id, key: 'k' })

    const events: string[] = []
    let headMoved: Promise<void> | undefined
    await inTransaction(dbh.db, async (tx) => {
      const rate = await tx.discounts.add({ accountId, targetFeeRate: '0.05', createdBy: 'test' })
      expect(rate.effective_from.toISOString()).toBe('2026-05-01T12:00:00.000Z')
      // the follower sees a newer head meanwhile (another connection): it waits for this transaction
      headMoved = repos.chain
        .setHead(1, { number: 101n, time: new Date('2026-05-01T12:00:12Z') })
        .then(() => {
          events.push('head moved')
        })
      await new Promise((r) => setTimeout(r, 300))
      events.push('registration commits')
    })
    await headMoved
    expect(events).toEqual(['registration commits', 'head moved'])
    // a registration after the move is stamped with the new head
    const later = await repos.discounts.add({ accountId, targetFeeRate: '0.04', createdBy: 'test' })
    expect(later.effective_from.toISOString()).toBe('2026-05-01T12:00:12.000Z')
  })
})
