import fs from 'node:fs/promises'
import path from 'node:path'
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  importPKCS8,
  type JWK,
} from 'jose'

/** A token signing key: private key for signing, public JWK (with kid) for the JWKS. */
export interface SigningKey {
  kid: string
  privateKey: CryptoKey
  publicJwk: JWK
}

/**
 * The signing key of a PKCS#8 PEM (P-256); its kid is the RFC 7638 thumbprint of the public key.
 *
 * @example
 * const key = await signingKeyFromPem(config.jwtPrivateKey)
 * key.publicJwk // { kty: 'EC', crv: 'P-256', x, y, kid, alg: 'ES256', use: 'sig' }
 */
export async function signingKeyFromPem(pem: string): Promise<SigningKey> {
  const privateKey = await importPKCS8(pem, 'ES256', { extractable: true })
  const jwk = await exportJWK(privateKey)
  const publicJwk: JWK = { kty: jwk.kty!, crv: jwk.crv!, x: jwk.x!, y: jwk.y! }
  const kid = await calculateJwkThumbprint(publicJwk)
  return { kid, privateKey, publicJwk: { ...publicJwk, kid, alg: 'ES256', use: 'sig' } }
}

/**
 * A new ES256 signing key and its PKCS#8 PEM (what is sealed into the store).
 *
 * @example
 * const { key, pem } = await generateSigningKey()
 */
export async function generateSigningKey(): Promise<{ key: SigningKey; pem: string }> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  const pem = await exportPKCS8(privateKey)
  return { key: await signingKeyFromPem(pem), pem }
}

/** Where versions before the shared signing keys kept a node's own key (`$DATA_DIR/jwt-signing-key.pem`). */
export const LEGACY_KEY_FILE = 'jwt-signing-key.pem'

/**
 * The PEM an earlier version kept in `$DATA_DIR/jwt-signing-key.pem`, or undefined when there is none: imported
 * as the first shared key, so the tokens it signed stay valid across the upgrade.
 */
export async function readLegacyKeyFile(dataDir: string): Promise<string | undefined> {
  try {
    return await fs.readFile(path.join(dataDir, LEGACY_KEY_FILE), 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}
