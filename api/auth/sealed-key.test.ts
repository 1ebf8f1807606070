import { randomBytes } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { SigningKeyError } from './errors.ts'
import { generateSigningKey } from './keys.ts'
import { openPrivateKey, sealPrivateKey, secretFingerprint } from './sealed-key.ts'

const secret = randomBytes(32)
const { key, pem } = await generateSigningKey()

/** The error `open` throws (fails the test when it throws none, or another kind). */
function refusal(open: () => unknown): SigningKeyError {
  try {
    open()
  } catch (err) {
    expect(err).toBeInstanceOf(SigningKeyError)
    return err as SigningKeyError
  }
  throw new Error('the sealed key opened')
}

/** `sealed` with one base64url character of part `index` changed. */
function altered(sealed: string, index: number): string {
  const parts = sealed.split('.')
  const part = parts[index]!
  parts[index] = `${part[0] === 'A' ? 'B' : 'A'}${part.slice(1)}`
  return parts.join('.')
}

describe('sealPrivateKey / openPrivateKey (AES-256-GCM)', () => {
  test('behavior: a sealed key opens to its PEM under the same secret; the PEM is nowhere in the sealed text', () => {
    const sealed = sealPrivateKey(secret, key.kid, pem)
    expect(openPrivateKey(secret, key.kid, sealed)).toBe(pem)
    const body = pem.split('\n')[1]!
    expect(sealed).not.toContain(body)
    expect(sealed.startsWith(`v1.${secretFingerprint(secret)}.`)).toBe(true)
    // a fresh IV each time: the same key sealed twice gives two texts
    expect(sealPrivateKey(secret, key.kid, pem)).not.toBe(sealed)
  })

  test('behavior: another secret is refused with a message naming SIGNING_KEY_SECRET and both fingerprints', () => {
    const sealed = sealPrivateKey(secret, key.kid, pem)
    const other = randomBytes(32)
    const err = refusal(() => openPrivateKey(other, key.kid, sealed))
    expect(err.problem).toBe('wrong_secret')
    expect(err.message).toContain('SIGNING_KEY_SECRET')
    expect(err.message).toContain(secretFingerprint(secret))
    expect(err.message).toContain(secretFingerprint(other))
  })

  test('behavior: an altered IV, ciphertext or tag, or a sealed key moved to another kid, fails the integrity check', () => {
    const sealed = sealPrivateKey(secret, key.kid, pem)
    for (const index of [2, 3, 4]) {
      const err = refusal(() => openPrivateKey(secret, key.kid, altered(sealed, index)))
      expect([index, err.problem]).toEqual([index, 'tampered'])
      expect(err.message).toMatch(/integrity check/)
    }
    const moved = refusal(() => openPrivateKey(secret, 'another-kid', sealed))
    expect(moved.problem).toBe('tampered')
  })

  test('behavior: text that is not a sealed key is refused as malformed; an altered fingerprint as another secret', () => {
    for (const text of ['', pem, 'v2.0011223344556677.a.b.c', 'v1.nothex.a.b.c']) {
      expect(refusal(() => openPrivateKey(secret, key.kid, text)).problem).toBe('malformed')
    }
    const sealed = sealPrivateKey(secret, key.kid, pem)
    const parts = sealed.split('.')
    parts[1] = '0'.repeat(16)
    expect(refusal(() => openPrivateKey(secret, key.kid, parts.join('.'))).problem).toBe('wrong_secret')
  })

  test('behavior: a secret that is not 32 bytes is refused', () => {
    expect(() => sealPrivateKey(randomBytes(16), key.kid, pem)).toThrow(/32 bytes/)
  })
})
