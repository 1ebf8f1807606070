import { ValidationError } from '../common/errors.ts'

/** The longest account key, in characters after normalization. */
export const MAX_ACCOUNT_KEY_LENGTH = 256

/** A key shaped like an account id would shadow one: `idOrKey` tries ids first. */
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Characters a key may not hold: control characters (Cc), format characters (Cf: zero-width spaces and joiners,
 * bidirectional overrides such as U+202E, the byte order mark), unassigned code points (Cn) and lone surrogates
 * (Cs). They make two keys look alike, or a key look like something it is not (`abc\u202egpj.exe`).
 */
const INVISIBLE_OR_CONTROL = /[\p{Cc}\p{Cf}\p{Cn}\p{Cs}]/u

/**
 * The key of a new account as it is stored: NFC-normalized (the composed and decomposed `é` are one key), then
 * checked: not blank, at most 256 characters, not shaped like a UUID (it would shadow an account id), no
 * control, format or unassigned characters. Throws ValidationError (reason `account_key`) naming the rule.
 *
 * @example
 * accountKey('cafe\u0301') // 'café' (NFC)
 * accountKey('7f1f5d64-0b5b-4a44-9f3e-2f5f6c1f4a10') // throws: shaped like an account id
 */
export function accountKey(raw: string): string {
  const key = raw.normalize('NFC')
  const refuse = (why: string): never => {
    throw new ValidationError(`key ${why}`, { reason: 'account_key' })
  }
  if (key.trim().length === 0 || key.length > MAX_ACCOUNT_KEY_LENGTH) {
    refuse(`must be a non-empty string of at most ${MAX_ACCOUNT_KEY_LENGTH} characters`)
  }
  if (UUID_SHAPE.test(key)) refuse('must not be shaped like a UUID: account ids have that shape')
  const bad = INVISIBLE_OR_CONTROL.exec(key)
  if (bad) {
    const code = (bad[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')
    refuse(`must not hold control, invisible or format characters (U+${code} at position ${bad.index})`)
  }
  return key
}
