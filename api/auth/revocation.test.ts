import { describe, expect, test } from 'vitest'
import { type ClientStatus, createClientStatusCache } from './revocation.ts'

/** A lookup over a table of statuses that counts its calls and can be made to fail or wait. */
function store(statuses: Record<string, ClientStatus>) {
  const calls: string[] = []
  let failing = false
  let gate: Promise<void> | undefined
  return {
    calls,
    fail(on: boolean) {
      failing = on
    },
    hold(until: Promise<void>) {
      gate = until
    },
    lookup: async (clientId: string) => {
      calls.push(clientId)
      await gate
      if (failing) throw new Error('database unreachable')
      return statuses[clientId]
    },
  }
}

describe('createClientStatusCache', () => {
  test('behavior: concurrent lookups of one client share one query; activeNow answers from memory only', async () => {
    const db = store({ cl_1: { orgId: 'org_a', revoked: false } })
    let release = () => {}
    db.hold(new Promise((resolve) => (release = resolve)))
    const cache = createClientStatusCache(db.lookup)
    expect(cache.activeNow('cl_1', 'org_a')).toBeUndefined()
    const answers = Promise.all([cache.active('cl_1', 'org_a'), cache.active('cl_1', 'org_a')])
    release()
    expect(await answers).toEqual([true, true])
    expect(db.calls).toEqual(['cl_1'])
    expect(cache.activeNow('cl_1', 'org_a')).toBe(true)
    expect(cache.activeNow('cl_1', 'org_b')).toBe(false)
  })

  test('edge: a deleted client is remembered as inactive; a failed lookup is not remembered', async () => {
    const db = store({})
    const cache = createClientStatusCache(db.lookup)
    expect(await cache.active('gone', 'org_a')).toBe(false)
    expect(cache.activeNow('gone', 'org_a')).toBe(false)
    expect(await cache.active('gone', 'org_a')).toBe(false)
    expect(db.calls).toEqual(['gone'])

    db.fail(true)
    await expect(cache.active('cl_2', 'org_a')).rejects.toThrow('database unreachable')
    db.fail(false)
    expect(await cache.active('cl_2', 'org_a')).toBe(false)
    expect(db.calls).toEqual(['gone', 'cl_2', 'cl_2'])
  })

  test('edge: past maxEntries the least recently used client is read again', async () => {
    const db = store({
      a: { orgId: 'o', revoked: false },
      b: { orgId: 'o', revoked: false },
      c: { orgId: 'o', revoked: false },
    })
    const cache = createClientStatusCache(db.lookup, { maxEntries: 2 })
    await cache.active('a', 'o')
    await cache.active('b', 'o')
    await cache.active('a', 'o') // a is now the most recently used
    await cache.active('c', 'o') // b leaves
    expect(cache.activeNow('a', 'o')).toBe(true)
    expect(cache.activeNow('b', 'o')).toBeUndefined()
    expect(db.calls).toEqual(['a', 'b', 'c'])
  })
})
