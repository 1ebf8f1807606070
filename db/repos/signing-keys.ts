import type { Queryable } from '../index.ts'

/** Where a signing key came from: made by the service, or imported (JWT_PRIVATE_KEY, an earlier key file). */
export type SigningKeySource = 'generated' | 'jwt_private_key' | 'key_file'

/** One row of `signing_keys`: a token signing key, its private part sealed (api/auth/sealed-key.ts). */
export interface SigningKeyRow {
  /** Order of creation (a bigint as a string): the highest is the current key. */
  seq: string
  kid: string
  /** The public key as a JWK (kty, crv, x, y, kid, alg, use). */
  public_jwk: Record<string, string>
  sealed_private_key: string
  source: SigningKeySource
  created_at: Date
}

/** Key of the transaction-scoped advisory lock that serializes additions of signing keys ('lssk'). */
const SIGNING_KEYS_LOCK_KEY = 0x6c73736b

/**
 * The token signing keys (`signing_keys`), newest first. Rows are only added: a replaced key's retirement is
 * worked out from its successor's `created_at` when the keys are read.
 *
 * @example
 * const [current] = await repos.signingKeys.list()
 */
export function createSigningKeysRepo(db: Queryable) {
  return {
    /** Every signing key, newest (the current one) first. */
    async list(): Promise<SigningKeyRow[]> {
      return db<SigningKeyRow>('signing_keys').orderBy('seq', 'desc')
    },
    /**
     * Adds a key unless one with its kid exists; answers the new row, or undefined when the kid was there.
     */
    async add(input: {
      kid: string
      publicJwk: Record<string, string>
      sealedPrivateKey: string
      source: SigningKeySource
    }): Promise<SigningKeyRow | undefined> {
      const [row] = await db('signing_keys')
        .insert({
          kid: input.kid,
          public_jwk: JSON.stringify(input.publicJwk),
          sealed_private_key: input.sealedPrivateKey,
          source: input.source,
        })
        .onConflict('kid')
        .ignore()
        .returning('*')
      return row as SigningKeyRow | undefined
    },
    /**
     * Within a transaction: waits for, then holds until it ends, the one lock of changes to the key set, so two
     * processes starting on an empty table make one first key (and a rotation checks the key it replaces).
     */
    async lockForChange(): Promise<void> {
      await db.raw('select pg_advisory_xact_lock(?, 0)', [SIGNING_KEYS_LOCK_KEY])
    },
  }
}
/** The signing keys repository `createSigningKeysRepo` returns. */
export type SigningKeysRepo = ReturnType<typeof createSigningKeysRepo>
