import { fc, test as fcTest } from '@fast-check/vitest'
import { describe, expect, test } from 'vitest'
import { duplicateJsonKey } from './json-body.ts'

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
