import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'

const N = 16384
const R = 8
const P = 1
const KEY_LEN = 32

function scryptAsync(secret: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_LEN, { N, r: R, p: P }, (err, key) => (err ? reject(err) : resolve(key)))
  })
}

/**
 * Hashes a client secret with scrypt: `scrypt$N$r$p$salt_b64$hash_b64`.
 *
 * @example
 * const stored = await hashSecret('s3cret')
 * await verifySecret('s3cret', stored) // true
 */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16)
  const hash = await scryptAsync(secret, salt)
  return ['scrypt', N, R, P, salt.toString('base64'), hash.toString('base64')].join('$')
}

/** Compares a presented secret with a stored hash in constant time. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false
  const [, n, r, p, saltB64, hashB64] = parts as [string, string, string, string, string, string]
  const expected = Buffer.from(hashB64, 'base64')
  const actual = await new Promise<Buffer>((resolve, reject) => {
    scrypt(
      secret,
      Buffer.from(saltB64, 'base64'),
      expected.length,
      { N: Number(n), r: Number(r), p: Number(p) },
      (err, key) => (err ? reject(err) : resolve(key)),
    )
  })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/** New client id (`cl_` + 24 hex) and secret (43 chars base64url, 256 bits). */
export function newClientCredentials(): { clientId: string; clientSecret: string } {
  return {
    clientId: `cl_${randomBytes(12).toString('hex')}`,
    clientSecret: randomBytes(32).toString('base64url'),
  }
}
