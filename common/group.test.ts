import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { groupBy } from './group.ts'

describe('groupBy', () => {
  test.prop([fc.array(fc.record({ key: fc.integer({ min: 0, max: 9 }), n: fc.integer() }))])(
    'property: each group is the filter of its key, in order, and the groups hold every item once',
    (items) => {
      const groups = groupBy(items, (item) => item.key)
      for (const [key, group] of groups) expect(group).toEqual(items.filter((item) => item.key === key))
      expect([...groups.values()].reduce((sum, group) => sum + group.length, 0)).toBe(items.length)
      expect([...groups.keys()].sort()).toEqual([...new Set(items.map((item) => item.key))].sort())
    },
  )
})
