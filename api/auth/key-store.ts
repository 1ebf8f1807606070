import type { Queryable } from '../../db/index.ts'
import { inTransaction, type Repos, type SigningKeyRow, type SigningKeySource } from '../../db/repos/index.ts'
import { generateSigningKey, readLegacyKeyFile, type SigningKey, signingKeyFromPem } from './keys.ts'
import { openPrivateKey, sealPrivateKey } from './sealed-key.ts'

/** Adds a key sealed under `secret`, after checking that `secret` opens the current key (one secret for all). */
async function addKey(
  repos: Repos,
  secret: Buffer,
  newest: SigningKeyRow | undefined,
  input: { key: SigningKey; pem: string; source: SigningKeySource },
): Promise<SigningKeyRow | undefined> {
  if (newest) openPrivateKey(secret, newest.kid, newest.sealed_private_key)
  return repos.signingKeys.add({
    kid: input.key.kid,
    publicJwk: input.key.publicJwk as Record<string, string>,
    sealedPrivateKey: sealPrivateKey(secret, input.key.kid, input.pem),
    source: input.source,
  })
}

/**
 * What an API process does at start, under the key-set lock: with JWT_PRIVATE_KEY, imports that key unless its
 * kid is stored already (it then signs, as the newest key; a later `keys rotate` replaces it for good); without
 * it, when no key is stored, adds the first one: the key an earlier version kept in `$DATA_DIR`
 * (jwt-signing-key.pem), else a new one. Answers the key added, if any. Throws a `SigningKeyError` when
 * `secret` does not open the current key.
 *
 * @example
 * await ensureSigningKey(db, { secret, jwtPrivateKey: config.jwtPrivateKey, dataDir: config.dataDir })
 */
export function ensureSigningKey(
  db: Queryable,
  input: { secret: Buffer; jwtPrivateKey: string | undefined; dataDir: string },
): Promise<SigningKeyRow | undefined> {
  return inTransaction(db, async (repos) => {
    await repos.signingKeys.lockForChange()
    const rows = await repos.signingKeys.list()
    if (input.jwtPrivateKey !== undefined) {
      const key = await signingKeyFromPem(input.jwtPrivateKey)
      if (rows.some((row) => row.kid === key.kid)) return undefined
      return addKey(repos, input.secret, rows[0], {
        key,
        pem: input.jwtPrivateKey,
        source: 'jwt_private_key',
      })
    }
    if (rows.length > 0) return undefined
    const legacy = await readLegacyKeyFile(input.dataDir)
    if (legacy !== undefined) {
      return addKey(repos, input.secret, undefined, {
        key: await signingKeyFromPem(legacy),
        pem: legacy,
        source: 'key_file',
      })
    }
    return addKey(repos, input.secret, undefined, { ...(await generateSigningKey()), source: 'generated' })
  })
}

/**
 * `lsreport keys rotate`: adds a new key, which signs from now on (every API process sees it within
 * `KEY_REFRESH_MS`); the key it replaces verifies until its tokens have expired. Refused (`SigningKeyError`)
 * when `secret` does not open the current key: the API processes could not open the new one.
 *
 * @example
 * const { added, replaced } = await rotateSigningKey(db, secret)
 */
export function rotateSigningKey(
  db: Queryable,
  secret: Buffer,
): Promise<{ added: SigningKeyRow; replaced: SigningKeyRow | undefined }> {
  return inTransaction(db, async (repos) => {
    await repos.signingKeys.lockForChange()
    const [replaced] = await repos.signingKeys.list()
    const added = await addKey(repos, secret, replaced, {
      ...(await generateSigningKey()),
      source: 'generated',
    })
    if (!added) throw new Error('a new signing key has the kid of a stored one') // P-256 keys never collide
    return { added, replaced }
  })
}
