import { describe, expect, test } from 'vitest'
import type { ReportDay } from '../../db/repos/reports.ts'
import { createResultStore, dayKey } from './result-store.ts'

/** The groups still holding their one entry `v`, among `keys`. */
const held = (store: ReturnType<typeof createResultStore>, keys: string[]) =>
  keys.filter((k) => store.entriesOf(k)?.get('v') !== undefined)

describe('createResultStore', () => {
  test('behavior: the least recently used group leaves first, however often the last one is read again', () => {
    const store = createResultStore(3)
    for (const k of ['a', 'b', 'c']) store.set(k, 'v', k)
    // a read twice in a row (the second read finds it last already), then b: c is the least recently used
    expect(store.get('a', 'v')).toBe('a')
    expect(store.get('a', 'v')).toBe('a')
    expect(store.get('b', 'v')).toBe('b')
    store.set('d', 'v', 'd')
    expect(store.get('c', 'v')).toBeUndefined()
    // a new group is the most recently used; a read of an older one moves it after it
    store.set('e', 'v', 'e') // drops a (order was a, b, d)
    expect(store.get('b', 'v')).toBe('b') // order: d, e, b
    store.set('f', 'v', 'f') // drops d
    expect(store.get('d', 'v')).toBeUndefined()
    expect(store.get('a', 'v')).toBeUndefined()
    expect(store.get('e', 'v')).toBe('e')
    expect(store.get('b', 'v')).toBe('b')
    expect(store.get('f', 'v')).toBe('f')
  })

  test('behavior: after an invalidation, reads still move their group last', () => {
    const day = (epoch: string, version: number) =>
      ({
        chain_id: 1,
        report_epoch: epoch,
        visible_version: version,
        content_hash: 'h',
        status: 'computed',
      }) as ReportDay
    const [d1, d2, d3] = [day('1', 1), day('2', 1), day('3', 1)] as [ReportDay, ReportDay, ReportDay]
    const store = createResultStore(2)
    store.set(dayKey(d1), 'v', 1)
    store.set(dayKey(d2), 'v', 2)
    expect(store.get(dayKey(d2), 'v')).toBe(2)
    // d2 gone from the visible days: its group is dropped
    store.invalidate([d1, d3])
    store.set(dayKey(d3), 'v', 3)
    // d1 read: now the most recently used, d3 leaves first
    expect(store.get(dayKey(d1), 'v')).toBe(1)
    store.set(dayKey(d2), 'v', 22)
    expect(held(store, [dayKey(d1), dayKey(d2), dayKey(d3)])).toEqual([dayKey(d1), dayKey(d2)])
  })
})
