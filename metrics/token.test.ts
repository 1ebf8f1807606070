import { describe, expect, test } from 'vitest'
import { createGuessBudget } from './token.ts'

describe('createGuessBudget', () => {
  test('behavior: an address meets its limit after max refusals in a window, others do not; the next window starts afresh', () => {
    let clock = 1_000_000
    const budget = createGuessBudget({ max: 3, windowMs: 10_000 }, () => clock)
    for (let i = 0; i < 3; i++) {
      expect(budget.overFor('a')).toBeUndefined()
      budget.refused('a')
    }
    expect(budget.overFor('a')).toBe(10)
    expect(budget.overFor('b')).toBeUndefined()
    clock += 9_500
    expect(budget.overFor('a')).toBe(1)
    clock += 500
    expect(budget.overFor('a')).toBeUndefined()
    budget.refused('a')
    expect(budget.overFor('a')).toBeUndefined()
  })
})
