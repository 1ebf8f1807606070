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

/** The token signing key: private key for signing, public JWK (with kid) for the JWKS. */
export interface SigningKey {
  kid: string
  privateKey: CryptoKey
  publicJwk: JWK
}

const KEY_FILE = 'jwt-signing-key.pem'

async function fromPem(pem: string): Promise<SigningKey> {
  const privateKey = await importPKCS8(pem, 'ES256', { extractable: true })
  const jwk = await exportJWK(privateKey)
  const publicJwk: JWK = { kty: jwk.kty!, crv: jwk.crv!, x: jwk.x!, y: jwk.y! }
  const kid = await calculateJwkThumbprint(publicJwk)
  return { kid, privateKey, publicJwk: { ...publicJwk, kid, alg: 'ES256', use: 'sig' } }
}

/**
 * Loads the ES256 signing key: from `pem` when given (JWT_PRIVATE_KEY), else from
 * `$DATA_DIR/jwt-signing-key.pem`, generating and persisting it (mode 0600) on first start.
 *
 * @example
 * const key = await loadSigningKey({ pem: undefined, dataDir: './data' })
 */
export async function loadSigningKey(options: {
  pem: string | undefined
  dataDir: string
}): Promise<SigningKey> {
  if (options.pem) return fromPem(options.pem)
  const file = path.join(options.dataDir, KEY_FILE)
  try {
    return await fromPem(await fs.readFile(file, 'utf8'))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  const pem = await exportPKCS8(privateKey)
  await fs.mkdir(options.dataDir, { recursive: true })
  try {
    await fs.writeFile(file, pem, { mode: 0o600, flag: 'wx' })
  } catch (err) {
    // another process won the race: use its key
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    return fromPem(await fs.readFile(file, 'utf8'))
  }
  return fromPem(pem)
}
