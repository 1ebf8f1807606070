import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'

/** The HKDF info of the download links' key: a key of its own, never the sealing or token keys. */
const LINK_KEY_INFO = 'lsreport export download links'

/** A download link's lifetime when GET /v1/exports/{id} names none (`link_ttl`), and the longest allowed. */
export const DEFAULT_LINK_TTL_SECONDS = 3_600
export const MAX_LINK_TTL_SECONDS = 7 * 24 * 3_600

/**
 * The key download links are signed with: HKDF-SHA256 of the service's secret (SIGNING_KEY_SECRET, or the
 * embedded one) with its own info, so every API process signs and checks the same links and the key serves no
 * other purpose.
 *
 * @example
 * const key = exportLinkKey(await signingKeySecret(config))
 */
export function exportLinkKey(secret: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), LINK_KEY_INFO, 32))
}

/** What a link grants: one organization's export, until `expires` (unix seconds). */
export interface LinkGrant {
  exportId: string
  orgId: string
  expires: number
}

/**
 * The link's signature: HMAC-SHA256 over the export id, the organization and the expiry, base64url.
 *
 * @example
 * signLink(key, { exportId, orgId, expires: 1767225600 }) // 'k3...'
 */
export function signLink(key: Buffer, grant: LinkGrant): string {
  return createHmac('sha256', key)
    .update(`lsreport-export-v1\n${grant.exportId.toLowerCase()}\n${grant.orgId}\n${grant.expires}`)
    .digest('base64url')
}

/** Whether `signature` is the link's own (compared in constant time). */
export function linkSignatureValid(key: Buffer, grant: LinkGrant, signature: string): boolean {
  const expected = Buffer.from(signLink(key, grant), 'base64url')
  const given = Buffer.from(signature, 'base64url')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** The download path and query of a link (relative to the service's base URL). */
export function downloadPath(key: Buffer, grant: LinkGrant): string {
  const signature = signLink(key, grant)
  return `/v1/exports/${grant.exportId}/download?expires=${grant.expires}&signature=${signature}`
}
