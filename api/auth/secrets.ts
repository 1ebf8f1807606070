import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'

const N = 16384
const R = 8
const P = 1
const KEY_LEN = 32

function scryptAsync(secret: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_LEN, { N, r: R, p: P }, (err, key) => (err ? reject(err) : resolve(key)))
  })
}

/**
 * Hashes a client secret with scrypt: `scrypt$N$r$p$salt_b64$hash_b64`.
 *
 * @example
 * const stored = await hashSecret('s3cret')
 * await verifySecret('s3cret', stored) // true
 */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16)
  const hash = await scryptAsync(secret, salt)
  return ['scrypt', N, R, P, salt.toString('base64'), hash.toString('base64')].join('$')
}

/** Compares a presented secret with a stored hash in constant time. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false
  const [, n, r, p, saltB64, hashB64] = parts as [string, string, string, string, string, string]
  const expected = Buffer.from(hashB64, 'base64')
  const actual = await new Promise<Buffer>((resolve, reject) => {
    scrypt(
      secret,
      Buffer.from(saltB64, 'base64'),
      expected.length,
      { N: Number(n), r: Number(r), p: Number(p) },
      (err, key) => (err ? reject(err) : resolve(key)),
    )
  })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/**
 * Checks a client's presented secret with the same work whatever the client id: scrypt runs against exactly
 * `candidates` hashes (MAX_SECRETS_PER_CLIENT), the client's active secrets padded with a dummy hash (all dummy
 * for an unknown or revoked client), in parallel; a client holding more live secrets than that (made before
 * the limit) has each checked. So neither an id's existence nor its number of secrets shows in the time taken.
 * `verify` is the scrypt check (a test passes one that counts its calls). Resolves to the client, or undefined.
 *
 * @example
 * const authenticate = createClientAuthenticator({ credentials: (id) => repos.clients.credentials(id), candidates: 2 })
 * const client = await authenticate('cl_...', 'secret')
 */
export function createClientAuthenticator<C extends { revoked_at: Date | null }>(deps: {
  credentials: (clientId: string) => Promise<{ client: C; secretHashes: string[] } | undefined>
  candidates: number
  verify?: (secret: string, stored: string) => Promise<boolean>
}): (clientId: string, clientSecret: string) => Promise<C | undefined> {
  const verify = deps.verify ?? verifySecret
  // same scrypt parameters as real secrets; made once, when the first check needs it
  let dummy: Promise<string> | undefined
  return async (clientId, clientSecret) => {
    dummy ??= hashSecret(randomBytes(32).toString('base64url'))
    const found = await deps.credentials(clientId)
    const usable = found !== undefined && found.client.revoked_at === null
    const real = usable ? found.secretHashes : []
    const hashes = [...real]
    while (hashes.length < deps.candidates) hashes.push(await dummy)
    const matches = await Promise.all(hashes.map((hash) => verify(clientSecret, hash)))
    return usable && matches.slice(0, real.length).some(Boolean) ? found.client : undefined
  }
}

/** New client id (`cl_` + 24 hex) and secret (43 chars base64url, 256 bits). */
export function newClientCredentials(): { clientId: string; clientSecret: string } {
  return {
    clientId: `cl_${randomBytes(12).toString('hex')}`,
    clientSecret: randomBytes(32).toString('base64url'),
  }
}
