import { SealedValueError } from '../../common/errors.ts'
import { openSealedText, type SealPurpose, sealText } from '../../common/sealed.ts'
import { SigningKeyError } from './errors.ts'

export { secretFingerprint } from '../../common/sealed.ts'

/** The signing keys' purpose of the sealing (common/sealed.ts): its key and associated data, as first stored. */
const SIGNING_KEYS: SealPurpose = { info: 'lsreport signing keys', aad: 'lsreport signing key' }

/**
 * Seals a private key (its PEM) with AES-256-GCM under a key derived from `secret`, bound to `kid`
 * (common/sealed.ts `sealText`): `v1.<secret fingerprint>.<iv>.<ciphertext>.<tag>`, a fresh random IV each time.
 *
 * @example
 * const sealed = sealPrivateKey(secret, key.kid, pem)
 * openPrivateKey(secret, key.kid, sealed) === pem // true
 */
export function sealPrivateKey(secret: Buffer, kid: string, pem: string): string {
  return sealText(secret, SIGNING_KEYS, kid, pem)
}

/**
 * Opens a sealed private key. Throws a `SigningKeyError`: `wrong_secret` when it was sealed under another
 * secret (the message gives both fingerprints), `tampered` when any part was altered (GCM's tag fails),
 * `malformed` when it is not a sealed key at all.
 */
export function openPrivateKey(secret: Buffer, kid: string, sealed: string): string {
  try {
    return openSealedText(secret, SIGNING_KEYS, kid, sealed)
  } catch (err) {
    if (!(err instanceof SealedValueError)) throw err
    if (err.problem === 'malformed') {
      throw new SigningKeyError(`signing key ${kid} is not a sealed key this version reads`, {
        problem: 'malformed',
      })
    }
    if (err.problem === 'wrong_secret') {
      throw new SigningKeyError(
        `signing key ${kid} was encrypted under another SIGNING_KEY_SECRET (fingerprint ${err.sealedUnder}; ` +
          `this process has ${err.openedWith}): every API process and \`lsreport keys\` need the secret the ` +
          'keys were made with',
        { problem: 'wrong_secret' },
      )
    }
    throw new SigningKeyError(
      `signing key ${kid} failed its integrity check (AES-256-GCM): the stored key was altered or damaged, ` +
        'and is refused',
      { problem: 'tampered', cause: err.cause },
    )
  }
}
