import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { SigningKeyError } from './errors.ts'

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

/** A 32-byte key of one purpose derived from the secret (HKDF-SHA256): the secret itself is never used twice. */
function derive(secret: Buffer, purpose: string): Buffer {
  if (secret.length !== 32) throw new RangeError('the signing-key secret must be 32 bytes')
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `lsreport signing keys ${purpose}`, 32))
}

/**
 * A short public name of a secret (16 hex digits of a key derived from it): it tells two secrets apart
 * without revealing either. Every sealed key carries the fingerprint of the secret it was sealed under.
 *
 * @example
 * secretFingerprint(Buffer.alloc(32)) // e.g. '3f1c0d9a2b7e4c51'
 */
export function secretFingerprint(secret: Buffer): string {
  return derive(secret, 'fingerprint').subarray(0, 8).toString('hex')
}

/** Associated data: binds a sealed key to its kid (a sealed key copied onto another row does not open). */
function aad(kid: string): Buffer {
  return Buffer.from(`lsreport signing key ${kid}`, 'utf8')
}

/**
 * Seals a private key (its PEM) with AES-256-GCM under a key derived from `secret`, bound to `kid`:
 * `v1.<secret fingerprint>.<iv>.<ciphertext>.<tag>` (base64url parts), a fresh random IV each time.
 *
 * @example
 * const sealed = sealPrivateKey(secret, key.kid, pem)
 * openPrivateKey(secret, key.kid, sealed) === pem // true
 */
export function sealPrivateKey(secret: Buffer, kid: string, pem: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', derive(secret, 'encryption'), iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(aad(kid))
  const ciphertext = Buffer.concat([cipher.update(pem, 'utf8'), cipher.final()])
  return [
    VERSION,
    secretFingerprint(secret),
    iv.toString('base64url'),
    ciphertext.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
  ].join('.')
}

/**
 * Opens a sealed private key. Throws a `SigningKeyError`: `wrong_secret` when it was sealed under another
 * secret (the message gives both fingerprints), `tampered` when any part was altered (GCM's tag fails),
 * `malformed` when it is not a sealed key at all.
 */
export function openPrivateKey(secret: Buffer, kid: string, sealed: string): string {
  const parts = sealed.split('.')
  const [version, fingerprint, ivText, ciphertextText, tagText] = parts
  if (parts.length !== 5 || version !== VERSION || !/^[0-9a-f]{16}$/.test(fingerprint ?? '')) {
    throw new SigningKeyError(`signing key ${kid} is not a sealed key this version reads`, {
      problem: 'malformed',
    })
  }
  const mine = secretFingerprint(secret)
  if (fingerprint !== mine) {
    throw new SigningKeyError(
      `signing key ${kid} was encrypted under another SIGNING_KEY_SECRET (fingerprint ${fingerprint}; this ` +
        `process has ${mine}): every API process and \`lsreport keys\` need the secret the keys were made with`,
      { problem: 'wrong_secret' },
    )
  }
  const iv = Buffer.from(ivText!, 'base64url')
  const tag = Buffer.from(tagText!, 'base64url')
  try {
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('wrong IV or tag length')
    const decipher = createDecipheriv('aes-256-gcm', derive(secret, 'encryption'), iv, {
      authTagLength: TAG_BYTES,
    })
    decipher.setAAD(aad(kid))
    decipher.setAuthTag(tag)
    return Buffer.concat([
      decipher.update(Buffer.from(ciphertextText!, 'base64url')),
      decipher.final(),
    ]).toString('utf8')
  } catch (err) {
    throw new SigningKeyError(
      `signing key ${kid} failed its integrity check (AES-256-GCM): the stored key was altered or damaged, ` +
        'and is refused',
      { problem: 'tampered', cause: err },
    )
  }
}
