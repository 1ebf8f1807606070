import { isIP } from 'node:net'
import path from 'node:path'
import { ConfigError } from './errors.ts'

export type ChainName = 'mainnet' | 'hoodi' | 'devnet'

/** Validated configuration. Built once by `loadConfig`, passed down in the context. */
export interface Config {
  /** Postgres URL; undefined means the embedded PGlite in `${dataDir}/pg`. */
  databaseUrl: string | undefined
  dataDir: string
  /** Redis URL; undefined means the inline job runner. */
  redisUrl: string | undefined
  /** JSON-RPC URL; undefined means the embedded anvil devnet. */
  rpcUrl: string | undefined
  chain: ChainName
  beaconUrl: string | undefined
  port: number
  host: string
  /** Public base URL of the API; the token audience. */
  baseUrl: string
  /** Issuer of access tokens (the token endpoint's base URL). */
  authUrl: string
  logLevel: string
  /**
   * JWT_PRIVATE_KEY: PEM (PKCS#8) ES256 private key; when set, imported into the signing keys (encrypted) and
   * current from the first start that sees it (api/auth/signing-keys.ts).
   */
  jwtPrivateKey: string | undefined
  /**
   * SIGNING_KEY_SECRET: the 32-byte key (64 hex digits or base64) the signing keys' private parts are encrypted
   * under in the database (AES-256-GCM). Unset: the embedded database keeps one in `$DATA_DIR/signing-key-secret`;
   * with DATABASE_URL the API refuses to start without it.
   */
  signingKeySecret: Buffer | undefined
  /** TOKEN_TTL_SECONDS (default 86400): lifetime of an access token, and how long a replaced signing key verifies. */
  tokenTtlSeconds: number
  /** Blocks behind head the follower treats as final. */
  confirmations: number
  /** Private key (0x...) of the Allowlist allower; the devnet supplies its own. */
  allowerPrivateKey: `0x${string}` | undefined
  /**
   * TRUST_PROXY: which proxies' `X-Forwarded-For` the API believes for a client's address (the rate limit's key
   * of anonymous requests): false (unset: the socket's address), a hop count, or proxy addresses and CIDR ranges.
   */
  trustProxy: false | number | string[]
  /** Requests per client per window. */
  rateLimitMax: number
  rateLimitWindowMs: number
  /** Maximum request body in bytes. */
  bodyLimit: number
  /**
   * REQUEST_TIMEOUT_MS (default 30000): a request whose headers and body have not all arrived by then is cut
   * (408), whatever pace a slow client keeps up; its headers alone get a third of it.
   */
  requestTimeoutMs: number
  /** Redis key prefix of the BullMQ queue (several deployments may share one Redis). */
  queuePrefix: string
  /** Jobs a BullMQ worker runs at once (WORKER_CONCURRENCY, default 2). */
  workerConcurrency: number
  /** How long a worker's lock on a job lasts (JOB_LOCK_MS, default 15000): a dead worker's job is retried after it. */
  jobLockMs: number
  /** WORKER_PORT: where `lsreport worker` serves /health and /metrics (on HOST); undefined (default): no port. */
  workerPort: number | undefined
  /** WORKER_STUCK_AFTER_MS (default 300000): a job in flight without progress this long turns the worker's /health 503. */
  workerStuckAfterMs: number
  /** Wallets per shard of a day's computation (DAY_SHARD_WALLETS, default 5000). */
  dayShardWallets: number
  /** Webhook deliveries: private addresses allowed (WEBHOOK_ALLOW_PRIVATE=1), timeouts, retry schedule, lanes, breaker. */
  webhooks: {
    allowPrivate: boolean
    timeoutMs: number
    /** WEBHOOK_CONNECT_TIMEOUT_MS (3 s): bound of an attempt's TCP connection. */
    connectTimeoutMs: number
    retryBaseMs: number
    retryWindowMs: number
    /** WEBHOOK_CONCURRENCY (64) / WEBHOOK_ORG_CONCURRENCY (8): deliveries at once per process / per organization. */
    concurrency: number
    orgConcurrency: number
    /** WEBHOOK_BREAKER_FAILURES (10; 0: never) failures in a row over WEBHOOK_BREAKER_MIN_MS (60 s) pause a webhook. */
    breakerFailures: number
    breakerMinMs: number
    /** WEBHOOK_BREAKER_PROBE_MS (60 s): wait before a paused webhook's first probe, doubled after each failed one. */
    breakerProbeMs: number
  }
  /** Bearer token GET /metrics requires (METRICS_TOKEN); undefined: /metrics is public. */
  metricsToken: string | undefined
  /**
   * METRICS_TENANT_LABELS=1: /metrics also shows per-tenant series (`org_id` labels, docs/metrics.md); default
   * 0: no label of any series names an organization or a client.
   */
  metricsTenantLabels: boolean
  /** What one tenant may create (`TenantLimits`): past a limit, the create is refused (400 IR3700, CLI exit 1). */
  limits: TenantLimits
  /**
   * DB_STALL_MS: how long a Postgres query may hear nothing before its connection counts as lost; undefined
   * leaves each command its default (`lsreport api` 15 s, the others 120 s).
   */
  dbStallMs: number | undefined
}

/**
 * What one tenant may create, each refused past its limit with a message naming it (docs/operations.md
 * "Tenant limits"): webhook subscriptions per organization (MAX_WEBHOOKS_PER_ORG, default 25: every event fans
 * out to each), live API clients per organization (MAX_CLIENTS_PER_ORG, default 20; revoked ones do not count)
 * and live secrets per client (MAX_SECRETS_PER_CLIENT, default 2, at most 5: a rotation's old and new; the token
 * endpoint checks a presented secret against this many candidates whatever the client has).
 */
export interface TenantLimits {
  webhooksPerOrg: number
  clientsPerOrg: number
  secretsPerClient: number
}

/** The limits when no variable sets them. */
export const DEFAULT_TENANT_LIMITS: TenantLimits = {
  webhooksPerOrg: 25,
  clientsPerOrg: 20,
  secretsPerClient: 2,
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/**
 * The 32 bytes of a signing-key secret written as 64 hex digits or as base64 / base64url (`openssl rand -hex 32`,
 * `openssl rand -base64 32`); undefined for anything else.
 *
 * @example
 * decodeKeySecret('00'.repeat(32))?.length // 32
 */
export function decodeKeySecret(text: string): Buffer | undefined {
  const raw = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(raw)) return Buffer.from(raw, 'hex')
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(raw)) return undefined
  const bytes = Buffer.from(raw.replace(/=$/, ''), 'base64url')
  return bytes.length === 32 ? bytes : undefined
}

function readUrl(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | undefined {
  const raw = env[name]?.trim()
  if (!raw) return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(`${name} is not a valid URL: ${JSON.stringify(raw)}`)
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must use one of ${protocols.join(', ')} (got ${url.protocol})`)
  }
  return raw
}

function readInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim()
  if (!raw) return fallback
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number (got ${JSON.stringify(raw)})`)
  const value = Number(raw)
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max} (got ${value})`)
  return value
}

/**
 * TRUST_PROXY: unset or empty, none (the socket's address is the client's); a whole number, that many proxy hops
 * in front of the API (the address the nearest untrusted hop reported); else a comma-separated list of proxy
 * addresses and CIDR ranges. `true` (every hop trusted, so any client could name its own address) is refused.
 */
function readTrustProxy(env: NodeJS.ProcessEnv): false | number | string[] {
  const raw = env.TRUST_PROXY?.trim()
  if (!raw) return false
  if (/^\d+$/.test(raw)) return readInt(env, 'TRUST_PROXY', 0, 1, 10)
  const entries = raw.split(',').map((entry) => entry.trim())
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/')
    const family = isIP(address ?? '')
    const maxPrefix = family === 6 ? 128 : 32
    const validPrefix = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= maxPrefix)
    if (family === 0 || !validPrefix || rest.length > 0) {
      throw new ConfigError(
        `TRUST_PROXY must be a hop count (1-10) or a comma-separated list of proxy addresses or CIDR ranges ` +
          `(got ${JSON.stringify(entry)}; \`true\` is refused: every client could name its own address)`,
      )
    }
  }
  return entries
}

function readPrefix(env: NodeJS.ProcessEnv): string {
  const raw = env.QUEUE_PREFIX?.trim() || 'lsreport'
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(raw)) {
    throw new ConfigError(
      `QUEUE_PREFIX must be 1-64 letters, digits, '_' or '-' (got ${JSON.stringify(raw)})`,
    )
  }
  return raw
}

/**
 * Reads and validates the environment. The only reader of `process.env` in the service:
 * entrypoints call it once and pass the result down. Invalid values throw a `ConfigError`
 * whose message names the variable.
 *
 * @example
 * const config = loadConfig(process.env)
 * config.port // 8080
 */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const databaseUrl = readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:'])
  const redisUrl = readUrl(env, 'REDIS_URL', ['redis:', 'rediss:'])
  const rpcUrl = readUrl(env, 'RPC_URL', ['http:', 'https:'])
  const beaconUrl = readUrl(env, 'BEACON_URL', ['http:', 'https:'])

  const chainRaw = env.CHAIN?.trim() || (rpcUrl ? 'mainnet' : 'devnet')
  if (!['mainnet', 'hoodi', 'devnet'].includes(chainRaw)) {
    throw new ConfigError(`CHAIN must be mainnet, hoodi or devnet (got ${JSON.stringify(chainRaw)})`)
  }
  const chain = chainRaw as ChainName
  if (chain !== 'devnet' && rpcUrl === undefined) {
    throw new ConfigError(`RPC_URL is required when CHAIN is ${chain}`)
  }

  const port = readInt(env, 'PORT', 8080, 0, 65535)
  const host = env.HOST?.trim() || '127.0.0.1'
  const baseUrl = (readUrl(env, 'BASE_URL', ['http:', 'https:']) ?? `http://${host}:${port}`).replace(
    /\/+$/,
    '',
  )
  const authUrl = (readUrl(env, 'AUTH_URL', ['http:', 'https:']) ?? baseUrl).replace(/\/+$/, '')

  const logLevel = env.LOG_LEVEL?.trim() || 'info'
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(
      `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(logLevel)})`,
    )
  }

  const jwtPrivateKey = env.JWT_PRIVATE_KEY?.trim() || undefined
  if (jwtPrivateKey !== undefined && !jwtPrivateKey.includes('-----BEGIN PRIVATE KEY-----')) {
    throw new ConfigError('JWT_PRIVATE_KEY must be a PKCS#8 PEM EC P-256 private key')
  }

  const secretRaw = env.SIGNING_KEY_SECRET?.trim() || undefined
  const signingKeySecret = secretRaw === undefined ? undefined : decodeKeySecret(secretRaw)
  if (secretRaw !== undefined && signingKeySecret === undefined) {
    throw new ConfigError(
      'SIGNING_KEY_SECRET must be 32 bytes written as 64 hex digits or base64 (openssl rand -base64 32)',
    )
  }

  const metricsToken = env.METRICS_TOKEN?.trim() || undefined
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN must be 16-256 printable characters without spaces')
  }

  const allowerRaw = env.ALLOWER_PRIVATE_KEY?.trim() || undefined
  if (allowerRaw !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(allowerRaw)) {
    throw new ConfigError('ALLOWER_PRIVATE_KEY must be 0x followed by 64 hex digits')
  }

  return {
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR?.trim() || './data'),
    redisUrl,
    rpcUrl,
    chain,
    beaconUrl,
    port,
    host,
    baseUrl,
    authUrl,
    logLevel,
    jwtPrivateKey,
    signingKeySecret,
    tokenTtlSeconds: readInt(env, 'TOKEN_TTL_SECONDS', 86_400, 1, 604_800),
    confirmations: readInt(env, 'CONFIRMATIONS', chain === 'devnet' ? 0 : 12, 0, 10_000),
    allowerPrivateKey: allowerRaw as `0x${string}` | undefined,
    trustProxy: readTrustProxy(env),
    rateLimitMax: readInt(env, 'RATE_LIMIT_MAX', 600, 1, 1_000_000),
    rateLimitWindowMs: readInt(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1_000, 86_400_000),
    bodyLimit: 1024 * 1024,
    requestTimeoutMs: readInt(env, 'REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000),
    queuePrefix: readPrefix(env),
    workerConcurrency: readInt(env, 'WORKER_CONCURRENCY', 2, 1, 64),
    jobLockMs: readInt(env, 'JOB_LOCK_MS', 15_000, 2_000, 600_000),
    workerPort: env.WORKER_PORT?.trim() ? readInt(env, 'WORKER_PORT', 0, 0, 65535) : undefined,
    workerStuckAfterMs: readInt(env, 'WORKER_STUCK_AFTER_MS', 300_000, 100, 86_400_000),
    dayShardWallets: readInt(env, 'DAY_SHARD_WALLETS', 5_000, 1, 1_000_000),
    webhooks: {
      allowPrivate: readInt(env, 'WEBHOOK_ALLOW_PRIVATE', 0, 0, 1) === 1,
      timeoutMs: readInt(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      retryBaseMs: readInt(env, 'WEBHOOK_RETRY_BASE_MS', 10_000, 10, 3_600_000),
      retryWindowMs: readInt(env, 'WEBHOOK_RETRY_WINDOW_MS', 86_400_000, 1_000, 604_800_000),
      connectTimeoutMs: readInt(env, 'WEBHOOK_CONNECT_TIMEOUT_MS', 3_000, 100, 120_000),
      concurrency: readInt(env, 'WEBHOOK_CONCURRENCY', 64, 1, 1_024),
      orgConcurrency: readInt(env, 'WEBHOOK_ORG_CONCURRENCY', 8, 1, 1_024),
      breakerFailures: readInt(env, 'WEBHOOK_BREAKER_FAILURES', 10, 0, 1_000_000),
      breakerMinMs: readInt(env, 'WEBHOOK_BREAKER_MIN_MS', 60_000, 0, 86_400_000),
      breakerProbeMs: readInt(env, 'WEBHOOK_BREAKER_PROBE_MS', 60_000, 100, 3_600_000),
    },
    metricsToken,
    metricsTenantLabels: readInt(env, 'METRICS_TENANT_LABELS', 0, 0, 1) === 1,
    limits: {
      webhooksPerOrg: readInt(env, 'MAX_WEBHOOKS_PER_ORG', DEFAULT_TENANT_LIMITS.webhooksPerOrg, 1, 10_000),
      clientsPerOrg: readInt(env, 'MAX_CLIENTS_PER_ORG', DEFAULT_TENANT_LIMITS.clientsPerOrg, 1, 10_000),
      secretsPerClient: readInt(env, 'MAX_SECRETS_PER_CLIENT', DEFAULT_TENANT_LIMITS.secretsPerClient, 1, 5),
    },
    dbStallMs: env.DB_STALL_MS?.trim() ? readInt(env, 'DB_STALL_MS', 0, 1_000, 3_600_000) : undefined,
  }
}
