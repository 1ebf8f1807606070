import { fc, test as fcTest } from '@fast-check/vitest'
import { describe, expect, test } from 'vitest'
import {
  duplicateJsonKey,
  MAX_JSON_MEMBERS,
  MAX_JSON_VALUES,
  parseJsonBody,
  scanJsonText,
} from './json-body.ts'
import { MAX_INPUT_DEPTH, unsafeInput } from './schemas.ts'

describe('duplicateJsonKey', () => {
  test.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"key":"x","other":{"key":1},"key":"y"}', 'key'],
    ['[{"a":1},{"a":1,"b":[{"c":1,"c":2}]}]', 'c'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{"x\\"y":1,"x\\"y":2}', 'x"y'],
    ['{"a":"{\\"a\\":1}","a":3}', 'a'],
  ])('behavior: %s has the duplicate key %j', (text, key) => {
    expect(duplicateJsonKey(text)).toBe(key)
  })

  test.each([
    '{"a":1,"b":{"a":2}}',
    '[{"a":1},{"a":1}]',
    '{"a":["a","a"],"b":"a"}',
    '{"a":"\\"a\\":1,\\"a\\":2"}',
    '{}',
    '"a"',
    '[]',
    '{"":1,"a":{"":2}}',
  ])('behavior: %s has none', (text) => {
    expect(duplicateJsonKey(text)).toBeUndefined()
  })

  fcTest.prop([fc.jsonValue()])(
    'property: JSON.stringify of any value never has a duplicate key',
    (value) => {
      expect(duplicateJsonKey(JSON.stringify(value))).toBeUndefined()
    },
  )

  fcTest.prop([fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), fc.jsonValue()])(
    'property: an object given one of its keys again is caught, at any depth',
    (object, value) => {
      const [key] = Object.keys(object)
      const text = JSON.stringify(object)
      const doubled = `${text.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(value)}}`
      expect(duplicateJsonKey(doubled)).toBe(key)
      expect(duplicateJsonKey(`[1,{"wrap":${doubled}}]`)).toBe(key)
    },
  )
})

describe('scanJsonText', () => {
  const nested = (levels: number, inner = '1') => `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`

  test('behavior: 32 levels pass; the 33rd is refused, in objects and arrays alike', () => {
    expect(scanJsonText(nested(MAX_INPUT_DEPTH))).toEqual({ keys: expect.any(Number) })
    expect(scanJsonText(nested(MAX_INPUT_DEPTH + 1)).refused).toEqual({
      problem: 'depth',
      message: 'body is nested deeper than 32 levels',
    })
    const objects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`
    expect(scanJsonText(objects(MAX_INPUT_DEPTH))).toEqual({ keys: expect.any(Number) })
    expect(scanJsonText(objects(MAX_INPUT_DEPTH + 1)).refused?.problem).toBe('depth')
    // brackets inside strings are not nesting
    expect(scanJsonText(JSON.stringify([`${'['.repeat(100)}\\`, '{'.repeat(100)]))).toEqual({
      keys: expect.any(Number),
    })
  })

  test('behavior: 10,000 values pass; 10,001 are refused, at any depth', () => {
    const numbers = (n: number) => `[${Array(n).fill(0).join(',')}]`
    expect(scanJsonText(numbers(MAX_JSON_VALUES))).toEqual({ keys: expect.any(Number) })
    expect(scanJsonText(numbers(MAX_JSON_VALUES + 1)).refused).toEqual({
      problem: 'values',
      message: 'body holds more than 10000 values',
    })
    // in objects of 100 members each, nested
    const object = `{${Array.from({ length: 100 }, (_, i) => `"k${i}":[]`).join(',')}}`
    const objects = (n: number) => `{"a":[${Array(n).fill(object).join(',')}]}`
    expect(scanJsonText(objects(49)).refused).toBeUndefined()
    expect(scanJsonText(objects(MAX_JSON_VALUES / 100)).refused?.problem).toBe('values')
    // commas inside strings are not values
    expect(scanJsonText(JSON.stringify([','.repeat(MAX_JSON_VALUES * 2)]))).toEqual({
      keys: expect.any(Number),
    })
  })

  test('behavior: objects of 256 members pass; one of 257 is refused, at any depth', () => {
    const object = (n: number) =>
      `{${Array.from({ length: n }, (_, i) => `"k${i}":{"a":1,"b":2}`).join(',')}}`
    expect(scanJsonText(`[${object(MAX_JSON_MEMBERS)}]`).refused).toBeUndefined()
    expect(scanJsonText(`[${object(MAX_JSON_MEMBERS + 1)}]`).refused).toEqual({
      problem: 'members',
      message: 'body has an object of more than 256 members',
    })
    // members of nested objects are their own objects'
    expect(scanJsonText(`[${object(200)},${object(200)}]`).refused).toBeUndefined()
  })

  test('behavior: 1 MiB bodies of the costliest shapes are refused or passed in one bounded walk', () => {
    const mib = 1024 * 1024
    const shapes = {
      arrays: '['.repeat(mib),
      objects: '{"a":'.repeat(mib / 5),
      numbers: `[${'0,'.repeat(mib / 2 - 1)}0]`,
      keys: `{${Array.from({ length: mib / 12 }, (_, i) => `"${i.toString(36).padStart(6, '0')}":0`).join(',')}}`,
      string: JSON.stringify(`${'\\"'.repeat(mib / 4)}`),
    }
    for (const [shape, text] of Object.entries(shapes)) {
      const started = performance.now()
      const scan = scanJsonText(text)
      const ms = performance.now() - started
      expect(scan.refused?.problem, shape).toBe(
        { arrays: 'depth', objects: 'depth', numbers: 'values', keys: 'members', string: undefined }[shape],
      )
      // ~1-3 ms here; the bound is loose for a shared machine
      expect(ms, shape).toBeLessThan(200)
    }
  })

  fcTest.prop([fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 40 })])(
    'property: the walk refuses the depth unsafeInput refuses after a parse, and finds what JSON.parse reads',
    (value, wraps) => {
      const text = `${'['.repeat(wraps)}${JSON.stringify(value)}${']'.repeat(wraps)}`
      const scan = scanJsonText(text)
      const deep = unsafeInput(JSON.parse(text), 'body')?.includes('nested deeper') ?? false
      expect(scan.refused?.problem === 'depth').toBe(deep)
      if (!scan.refused) expect(parseJsonBody(text)).toEqual({ value: JSON.parse(text) })
    },
  )
})

describe('parseJsonBody', () => {
  test.each([
    ['{"a":1,"a":2}', 'IR1001', 'JSON body has the key "a" twice'],
    ['[{"a":1},{"b":{"c":1,"\\u0063":2}}]', 'IR1001', 'JSON body has the key "c" twice'],
    ['{"a":', 'IR1001', 'malformed JSON body'],
    [`${'['.repeat(33)}${']'.repeat(33)}`, 'IR1000', 'body is nested deeper than 32 levels'],
    [`[${'1,'.repeat(MAX_JSON_VALUES)}1]`, 'IR1006', 'body holds more than 10000 values'],
  ])('behavior: %s is refused with %s', (text, code, message) => {
    expect(parseJsonBody(text)).toEqual({ problem: { code, message } })
  })

  test('behavior: __proto__ and integer-like keys are keys like any other', () => {
    expect(parseJsonBody('{"__proto__":1,"1":2,"a":{"0":3}}')).toEqual({
      value: JSON.parse('{"__proto__":1,"1":2,"a":{"0":3}}'),
    })
    expect(parseJsonBody('{"__proto__":1,"__proto__":2}')).toMatchObject({ problem: { code: 'IR1001' } })
  })

  fcTest.prop([
    fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 }), { minKeys: 1 }),
    fc.jsonValue({ maxDepth: 4 }),
  ])(
    'property: a key given twice is refused, naming it; the body without it parses as JSON.parse reads it',
    (object, value) => {
      const [key] = Object.keys(object)
      const text = JSON.stringify(object)
      expect(parseJsonBody(text)).toEqual({ value: JSON.parse(text) })
      const doubled = `[1,{"wrap":${text.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(value)}}}]`
      expect(parseJsonBody(doubled)).toEqual({
        problem: { code: 'IR1001', message: `JSON body has the key ${JSON.stringify(key)} twice` },
      })
    },
  )
})
