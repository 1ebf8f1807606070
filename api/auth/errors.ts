import { LsReportError } from '../../common/errors.ts'

/**
 * Why a signing key cannot be used: sealed under another SIGNING_KEY_SECRET, altered in the store, not a sealed
 * key this version reads, or (for a token) signed by a key that is unknown or retired.
 */
export type SigningKeyProblem = 'wrong_secret' | 'tampered' | 'malformed' | 'unknown_kid' | 'retired'

/**
 * A signing key that cannot be used (api/auth/signing-keys.ts). At start and in `lsreport keys` the message is
 * shown as it is; for a token it becomes 401 IR2001.
 *
 * @example
 * throw new SigningKeyError('signing key k1 failed its integrity check', { problem: 'tampered' })
 */
export class SigningKeyError extends LsReportError {
  override name = 'SigningKeyError'
  readonly problem: SigningKeyProblem

  constructor(message: string, options: { problem: SigningKeyProblem; cause?: unknown }) {
    super(message, options.cause === undefined ? {} : { cause: options.cause })
    this.problem = options.problem
  }
}
