import { setTimeout as sleep } from 'node:timers/promises'
import { type CryptoKey, importJWK, type JWK } from 'jose'
import type { Config } from '../../common/config.ts'
import { LsReportError } from '../../common/errors.ts'
import type { Logger } from '../../common/logger.ts'
import type { Queryable } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import { SigningKeyError } from './errors.ts'
import { signingKeySecret } from './key-secret.ts'
import { KEY_REFRESH_MS, type KeyState, keyStates, statusAt } from './key-states.ts'
import { ensureSigningKey } from './key-store.ts'
import { type SigningKey, signingKeyFromPem } from './keys.ts'
import { openPrivateKey } from './sealed-key.ts'

/** An unknown kid re-reads the key set, at most once this often (a flood of made-up kids costs one query a second). */
const UNKNOWN_KID_REFRESH_MS = 1_000
/** How long before the key set gets too old (`KEY_REFRESH_MS`) a token check starts reading it again. */
const REFRESH_AHEAD_MS = 1_000

/**
 * The token signing keys of an API process, shared with every other process through the store: it signs with
 * the current (newest) key and verifies with any live one, whichever process made it.
 */
export interface SigningKeys {
  /** Lifetime of the tokens it signs (TOKEN_TTL_SECONDS); a replaced key verifies that long after, plus a grace. */
  readonly tokenTtlSeconds: number
  /** The key new tokens are signed with: the newest stored key, read again when older than `KEY_REFRESH_MS`. */
  current(): Promise<SigningKey>
  /**
   * The public key of `kid` while it is live. An unknown kid reads the set again first (a key another process
   * added); a `SigningKeyError` (`unknown_kid`, `retired`) otherwise.
   */
  verificationKey(kid: string | undefined): Promise<CryptoKey>
  /** The public JWKs of the live keys (current and retiring), newest first: GET /.well-known/jwks.json. */
  jwks(): Promise<JWK[]>
  /**
   * Whether the key `kid` still verifies, from the key set held while it is fresh (read less than
   * `KEY_REFRESH_MS` ago): `live` (current or retiring), `retired` (its time has passed), `removed` (its row is
   * gone); undefined when the held set is older (`keyStatus` reads it again). What a token verified before is
   * checked against on every use (api/auth/plugin.ts), with no promise while the set is fresh.
   */
  keyStatusNow(kid: string): KeyLiveness | undefined
  /** `keyStatusNow` from a fresh set: read again first when the held one is older than `KEY_REFRESH_MS`. */
  keyStatus(kid: string): Promise<KeyLiveness>
}

/** Whether a key verifies now: `live` (current or retiring), `retired`, or `removed` from the store. */
export type KeyLiveness = 'live' | 'retired' | 'removed'

interface KeySet {
  /** When the read that made it started. */
  startedAt: number
  states: KeyState[]
  byKid: Map<string, KeyState>
}

/**
 * The signing keys over the store (`signing_keys`), their private parts opened with `secret`. Reads the set
 * when first used and again when it is older than `KEY_REFRESH_MS`; a failed re-read keeps the set read before
 * (logged). Retirement is worked out at each use (api/auth/key-states.ts), so a key stops verifying on time
 * with no write.
 *
 * @example
 * const keys = createSigningKeys({ db, secret, tokenTtlSeconds: 86_400, logger })
 * const jwt = await issueToken(await keys.current(), claims)
 */
export function createSigningKeys(deps: {
  db: Queryable
  secret: Buffer
  tokenTtlSeconds: number
  logger: Logger
}): SigningKeys {
  const repo = createRepos(deps.db).signingKeys
  let set: KeySet = { startedAt: Number.NEGATIVE_INFINITY, states: [], byKid: new Map() }
  let pending: Promise<KeySet> | undefined
  const privateKeys = new Map<string, Promise<SigningKey>>()
  const publicKeys = new Map<string, Promise<CryptoKey>>()

  function reload(): Promise<KeySet> {
    if (pending) return pending
    const startedAt = Date.now()
    pending = repo
      .list()
      .then((rows) => {
        const states = keyStates(rows, deps.tokenTtlSeconds)
        set = { startedAt, states, byKid: new Map(states.map((s) => [s.row.kid, s])) }
        return set
      })
      .finally(() => {
        pending = undefined
      })
    return pending
  }

  /** The set, read again when older than KEY_REFRESH_MS (the set read before when that fails). */
  async function fresh(): Promise<KeySet> {
    if (Date.now() - set.startedAt < KEY_REFRESH_MS) return set
    try {
      return await reload()
    } catch (err) {
      if (set.states.length === 0) throw err
      deps.logger.warn({ err }, 'signing keys not read again: the keys read before are used')
      return set
    }
  }

  /** A set whose read started at or after `since` (a token's arrival), reads spaced UNKNOWN_KID_REFRESH_MS apart. */
  async function readSince(since: number): Promise<KeySet> {
    while (set.startedAt < since) {
      if (pending) {
        await pending
        continue
      }
      const wait = set.startedAt + UNKNOWN_KID_REFRESH_MS - Date.now()
      if (wait > 0) await sleep(wait)
      else await reload()
    }
    return set
  }

  /** The liveness of `kid` in `held` at this moment (a kid verified before and absent now was removed). */
  function livenessIn(held: KeySet, kid: string): KeyLiveness {
    const known = held.byKid.get(kid)
    if (!known) return 'removed'
    return statusAt(known, Date.now()) === 'retired' ? 'retired' : 'live'
  }

  function privateKeyOf(state: KeyState): Promise<SigningKey> {
    const { kid, sealed_private_key: sealed } = state.row
    let key = privateKeys.get(kid)
    if (!key) {
      key = signingKeyFromPem(openPrivateKey(deps.secret, kid, sealed)).then((opened) => {
        if (opened.kid !== kid) {
          throw new SigningKeyError(`signing key ${kid} opens to another key (${opened.kid})`, {
            problem: 'tampered',
          })
        }
        return opened
      })
      privateKeys.set(kid, key)
    }
    return key
  }

  function publicKeyOf(state: KeyState): Promise<CryptoKey> {
    let key = publicKeys.get(state.row.kid)
    if (!key) {
      key = importJWK(state.row.public_jwk, 'ES256') as Promise<CryptoKey>
      publicKeys.set(state.row.kid, key)
    }
    return key
  }

  return {
    tokenTtlSeconds: deps.tokenTtlSeconds,
    async current() {
      const newest = (await fresh()).states[0]
      if (!newest) throw new LsReportError('no token signing key is stored: start `lsreport api` to make one')
      return privateKeyOf(newest)
    },
    async verificationKey(kid) {
      const arrived = Date.now()
      if (kid === undefined)
        throw new SigningKeyError('the token names no key (kid)', { problem: 'unknown_kid' })
      let known = (await fresh()).byKid.get(kid)
      if (!known) known = (await readSince(arrived)).byKid.get(kid)
      if (!known) throw new SigningKeyError(`no signing key ${kid}`, { problem: 'unknown_kid' })
      if (statusAt(known, Date.now()) === 'retired') {
        throw new SigningKeyError(`signing key ${kid} is retired`, { problem: 'retired' })
      }
      return publicKeyOf(known)
    },
    async jwks() {
      const now = Date.now()
      return (await fresh()).states.filter((s) => statusAt(s, now) !== 'retired').map((s) => s.row.public_jwk)
    },
    keyStatusNow(kid) {
      const age = Date.now() - set.startedAt
      // read again a second before the set gets too old, in the background: under load no request waits
      if (age >= KEY_REFRESH_MS - REFRESH_AHEAD_MS && !pending) {
        reload().catch((err) =>
          deps.logger.warn({ err }, 'signing keys not read again: the keys read before are used'),
        )
      }
      return age < KEY_REFRESH_MS ? livenessIn(set, kid) : undefined
    },
    async keyStatus(kid) {
      return livenessIn(await fresh(), kid)
    },
  }
}

/**
 * What `lsreport api` and `up` start with (docs/operations.md "Token signing keys"): the secret
 * (`signingKeySecret`: refused with DATABASE_URL and no SIGNING_KEY_SECRET), the first key or the
 * JWT_PRIVATE_KEY import (`ensureSigningKey`), then the current key opened once, so a wrong secret or an altered
 * key stops the start with its message.
 *
 * @example
 * const keys = await openSigningKeys({ db: ctx.dbh.db, config: ctx.config, logger: ctx.logger })
 */
export async function openSigningKeys(deps: {
  db: Queryable
  config: Config
  logger: Logger
}): Promise<SigningKeys> {
  const { config } = deps
  const secret = await signingKeySecret(config)
  let added: Awaited<ReturnType<typeof ensureSigningKey>>
  try {
    added = await ensureSigningKey(deps.db, {
      secret,
      jwtPrivateKey: config.jwtPrivateKey,
      dataDir: config.dataDir,
    })
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') {
      throw new LsReportError('the database has no signing_keys table: run `lsreport migrate` first', {
        cause: err,
      })
    }
    throw err
  }
  if (added) deps.logger.info({ kid: added.kid, source: added.source }, 'signing key added')
  const keys = createSigningKeys({
    db: deps.db,
    secret,
    tokenTtlSeconds: config.tokenTtlSeconds,
    logger: deps.logger,
  })
  await keys.current()
  return keys
}
