import { fc, test as fcTest } from '@fast-check/vitest'
import { describe, expect, test } from 'vitest'
import { ValidationError } from '../common/errors.ts'
import { accountKey } from './account-keys.ts'

describe('accountKey', () => {
  test('behavior: keys are NFC-normalized: the composed and decomposed forms are one key', () => {
    expect(accountKey('cafe\u0301')).toBe('caf\u00e9')
    expect(accountKey('caf\u00e9')).toBe('caf\u00e9')
    expect(accountKey('customer-1')).toBe('customer-1')
  })

  test.each([
    ['', /non-empty/],
    ['   ', /non-empty/],
    ['x'.repeat(257), /at most 256/],
    ['7f1f5d64-0b5b-4a44-9f3e-2f5f6c1f4a10', /shaped like a UUID/],
    ['7F1F5D64-0B5B-4A44-9F3E-2F5F6C1F4A10', /shaped like a UUID/],
    ['\u200b', /U\+200B at position 0/],
    ['abc\u202egpj.exe', /U\+202E at position 3/],
    ['a\u0000b', /U\+0000/],
    ['tab\there', /U\+0009/],
    ['bom\ufeff', /U\+FEFF/],
    ['joiner\u2060x', /U\+2060/],
    ['lone\ud800', /U\+D800/],
  ])('behavior: %j is refused (%s)', (key, message) => {
    expect(() => accountKey(key)).toThrow(ValidationError)
    expect(() => accountKey(key)).toThrow(message)
  })

  fcTest.prop([fc.string({ unit: 'grapheme', minLength: 1, maxLength: 64 })])(
    'property: an accepted key is NFC, idempotent, and holds no control or format character',
    (raw) => {
      let key: string
      try {
        key = accountKey(raw)
      } catch (err) {
        expect(err).toBeInstanceOf(ValidationError)
        return
      }
      expect(key).toBe(key.normalize('NFC'))
      expect(accountKey(key)).toBe(key)
      expect(/[\p{Cc}\p{Cf}]/u.test(key)).toBe(false)
    },
  )
})
