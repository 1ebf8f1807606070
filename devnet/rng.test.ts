import { describe, expect, test } from 'vitest'
import { createRng } from './rng.ts'

describe('createRng', () => {
  test('behavior: the same seed gives the same sequence, forks are independent and stable', () => {
    const a = createRng(42)
    const b = createRng(42)
    expect(Array.from({ length: 5 }, () => a.next())).toEqual(Array.from({ length: 5 }, () => b.next()))
    expect(createRng(42).fork('x').next()).toBe(createRng(42).fork('x').next())
    expect(createRng(42).fork('x').next()).not.toBe(createRng(42).fork('y').next())
    expect(createRng(42).next()).not.toBe(createRng(43).next())
  })

  test('behavior: values stay in range', () => {
    const rng = createRng('range')
    for (let i = 0; i < 1000; i++) {
      const x = rng.next()
      expect(x >= 0 && x < 1).toBe(true)
      const n = rng.int(7)
      expect(Number.isInteger(n) && n >= 0 && n < 7).toBe(true)
    }
    expect(() => rng.pick([])).toThrow()
  })
})

describe('createRng restored from its draws', () => {
  test('behavior: a generator made with the draws of another continues its sequence', () => {
    const a = createRng('resume')
    for (let i = 0; i < 37; i++) a.next()
    a.int(5)
    a.chance(0.5)
    const b = createRng('resume', a.draws())
    expect(b.draws()).toBe(39)
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(Array.from({ length: 5 }, () => a.next()))
  })
})
