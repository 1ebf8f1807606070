import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { SealedValueError } from './errors.ts'

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

/**
 * What a sealed value is for: the HKDF info of its encryption key (`${info} encryption`) and the associated
 * data each value is bound to (`${aad} ${id}`), so two purposes never share a key and a value copied onto
 * another row does not open.
 */
export interface SealPurpose {
  info: string
  aad: string
}

/** A 32-byte key of one purpose derived from the secret (HKDF-SHA256): the secret itself is never used twice. */
function derive(secret: Buffer, info: string): Buffer {
  if (secret.length !== 32) throw new RangeError('the sealing secret must be 32 bytes')
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info, 32))
}

/**
 * A short public name of a secret (16 hex digits of a key derived from it): it tells two secrets apart
 * without revealing either. Every sealed value carries the fingerprint of the secret it was sealed under.
 *
 * @example
 * secretFingerprint(Buffer.alloc(32)) // e.g. '3f1c0d9a2b7e4c51'
 */
export function secretFingerprint(secret: Buffer): string {
  // the info of the first purpose sealed this way (the signing keys): fingerprints already stored stay valid
  return derive(secret, 'lsreport signing keys fingerprint').subarray(0, 8).toString('hex')
}

/**
 * Seals a text with AES-256-GCM under a key derived from `secret` for `purpose`, bound to `id`:
 * `v1.<secret fingerprint>.<iv>.<ciphertext>.<tag>` (base64url parts), a fresh random IV each time.
 *
 * @example
 * const sealed = sealText(secret, { info: 'lsreport webhook secrets', aad: 'lsreport webhook' }, id, 'whsec_...')
 * openSealedText(secret, purpose, id, sealed) // 'whsec_...'
 */
export function sealText(secret: Buffer, purpose: SealPurpose, id: string, text: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', derive(secret, `${purpose.info} encryption`), iv, {
    authTagLength: TAG_BYTES,
  })
  cipher.setAAD(Buffer.from(`${purpose.aad} ${id}`, 'utf8'))
  const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()])
  return [
    VERSION,
    secretFingerprint(secret),
    iv.toString('base64url'),
    ciphertext.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
  ].join('.')
}

/** True when `value` has the shape of a sealed value (`sealText`'s five parts), opened or not. */
export function isSealedText(value: string): boolean {
  const parts = value.split('.')
  return parts.length === 5 && parts[0] === VERSION && /^[0-9a-f]{16}$/.test(parts[1] ?? '')
}

/**
 * Opens a value `sealText` sealed for the same purpose and id. Throws a `SealedValueError`: `wrong_secret` when
 * it was sealed under another secret (with both fingerprints), `tampered` when any part was altered or the id
 * differs (GCM's tag fails), `malformed` when it is not a sealed value at all.
 */
export function openSealedText(secret: Buffer, purpose: SealPurpose, id: string, sealed: string): string {
  if (!isSealedText(sealed)) throw new SealedValueError('malformed')
  const [, fingerprint, ivText, ciphertextText, tagText] = sealed.split('.') as [
    string,
    string,
    string,
    string,
    string,
  ]
  const mine = secretFingerprint(secret)
  if (fingerprint !== mine) {
    throw new SealedValueError('wrong_secret', { sealedUnder: fingerprint, openedWith: mine })
  }
  const iv = Buffer.from(ivText, 'base64url')
  const tag = Buffer.from(tagText, 'base64url')
  try {
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('wrong IV or tag length')
    const decipher = createDecipheriv('aes-256-gcm', derive(secret, `${purpose.info} encryption`), iv, {
      authTagLength: TAG_BYTES,
    })
    decipher.setAAD(Buffer.from(`${purpose.aad} ${id}`, 'utf8'))
    decipher.setAuthTag(tag)
    return Buffer.concat([
      decipher.update(Buffer.from(ciphertextText, 'base64url')),
      decipher.final(),
    ]).toString('utf8')
  } catch (err) {
    throw new SealedValueError('tampered', { cause: err })
  }
}
