import { LsReportError, SealedValueError } from '../common/errors.ts'
import { openSealedText, type SealPurpose, sealText } from '../common/sealed.ts'

/** The webhook secrets' purpose of the sealing (common/sealed.ts): a key of their own, bound to the subscription. */
const WEBHOOK_SECRETS: SealPurpose = { info: 'lsreport webhook secrets', aad: 'lsreport webhook' }

/**
 * A subscription's stored signing secret that does not open (sealed under another SIGNING_KEY_SECRET, altered,
 * or not sealed): its deliveries cannot be signed. The message says which and what to do.
 */
export class WebhookSecretError extends LsReportError {
  override name = 'WebhookSecretError'
}

/**
 * Seals a subscription's `whsec_` secret for storage in `webhooks.secret` (AES-256-GCM under SIGNING_KEY_SECRET,
 * the mechanism the token signing keys are sealed with), bound to the subscription's id: the database never
 * holds it in the clear.
 *
 * @example
 * const stored = sealWebhookSecret(key, webhookId, 'whsec_...')
 * openWebhookSecret(key, webhookId, stored) // 'whsec_...'
 */
export function sealWebhookSecret(key: Buffer, webhookId: string, secret: string): string {
  return sealText(key, WEBHOOK_SECRETS, webhookId, secret)
}

/**
 * Opens a stored subscription secret (`sealWebhookSecret`). Throws a `WebhookSecretError` when it was sealed
 * under another SIGNING_KEY_SECRET (both fingerprints named), was altered or moved to another subscription, or
 * is not sealed (a plain `whsec_` secret: migration 017 seals every one).
 */
export function openWebhookSecret(key: Buffer, webhookId: string, stored: string): string {
  try {
    return openSealedText(key, WEBHOOK_SECRETS, webhookId, stored)
  } catch (err) {
    if (!(err instanceof SealedValueError)) throw err
    const why =
      err.problem === 'wrong_secret'
        ? `was sealed under another SIGNING_KEY_SECRET (fingerprint ${err.sealedUnder}; this process has ` +
          `${err.openedWith}): the worker needs the API's SIGNING_KEY_SECRET`
        : err.problem === 'tampered'
          ? 'failed its integrity check (AES-256-GCM): the stored secret was altered or damaged'
          : 'is not sealed (run `lsreport migrate`: migration 017 seals plain secrets)'
    throw new WebhookSecretError(`the signing secret of webhook ${webhookId} ${why}`, { cause: err })
  }
}
