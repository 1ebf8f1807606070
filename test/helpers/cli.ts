import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { promisify } from 'node:util'

const BIN = path.resolve(import.meta.dirname, '../../bin/lsreport.mjs')
const run = promisify(execFile)

/**
 * The service's own variables (docs/operations.md "Operator contract"): a child gets only those the test passes, never
 * the runner's (CI exports DATABASE_URL and REDIS_URL; vite sets BASE_URL=/).
 */
const SERVICE_VARS = [
  'DATABASE_URL',
  'DATA_DIR',
  'REDIS_URL',
  'RPC_URL',
  'CHAIN',
  'BEACON_URL',
  'PORT',
  'HOST',
  'BASE_URL',
  'AUTH_URL',
  'LOG_LEVEL',
  'JWT_PRIVATE_KEY',
  'SIGNING_KEY_SECRET',
  'TOKEN_TTL_SECONDS',
  'CONFIRMATIONS',
  'ALLOWER_PRIVATE_KEY',
  'RATE_LIMIT_MAX',
  'RATE_LIMIT_WINDOW_MS',
  'QUEUE_PREFIX',
  'WORKER_CONCURRENCY',
  'JOB_LOCK_MS',
  'WORKER_PORT',
  'WORKER_STUCK_AFTER_MS',
  'METRICS_TOKEN',
  'DAY_SHARD_WALLETS',
  'DB_STALL_MS',
  'MODE',
  'DEV',
  'PROD',
  'SSR',
]

/**
 * A SIGNING_KEY_SECRET for the `lsreport api` processes a test starts on Postgres (required with DATABASE_URL;
 * docs/operations.md "Token signing keys"): the same for every process of a test file.
 */
export const TEST_SIGNING_KEY_SECRET = randomBytes(32).toString('base64')

/**
 * The 32 bytes of TEST_SIGNING_KEY_SECRET: what a test app seals webhook secrets under, so the jobs a test
 * builds beside it take it as their `webhookSealingKey` / `sealingKey`.
 */
export async function testSealingKey(): Promise<Buffer> {
  return Buffer.from(TEST_SIGNING_KEY_SECRET, 'base64')
}

function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !SERVICE_VARS.includes(k)))
  return { ...inherited, ...env }
}

/** Runs `lsreport <args>` as a user would and answers its stdout. */
export async function cliText(args: string[], env: Record<string, string>, bin = BIN): Promise<string> {
  const { stdout } = await run(process.execPath, [bin, ...args], {
    env: childEnv(env),
    timeout: 60_000,
  })
  return stdout
}

/**
 * Runs `lsreport <args>` as a user would and parses its JSON stdout. `bin` (here and in `cliText`, `cliFails`,
 * `spawnCli`): another install's bin/lsreport.mjs (test/production-install.test.ts); this repository's by default.
 */
export async function cli<T = unknown>(args: string[], env: Record<string, string>, bin = BIN): Promise<T> {
  return JSON.parse(await cliText(args, env, bin)) as T
}

/**
 * What an operator does before a platform can call: creates an org (allowed to allowlist) and a client with
 * `scopes` through the CLI, on the database `env` names.
 */
export async function cliOrgClient(
  env: Record<string, string>,
  name: string,
  scopes = 'read:platform write:platform',
): Promise<{ org: { id: string }; client: { client_id: string; client_secret: string } }> {
  const org = await cli<{ id: string }>(['orgs', 'create', '--name', name, '--json'], env)
  const client = await cli<{ client_id: string; client_secret: string }>(
    ['clients', 'create', '--org', org.id, '--scopes', scopes, '--json'],
    env,
  )
  return { org, client }
}

/** Runs `lsreport <args>` expecting failure; returns exit code and stderr. */
export async function cliFails(
  args: string[],
  env: Record<string, string>,
  bin = BIN,
): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, [bin, ...args], { env: childEnv(env), timeout: 60_000 })
  } catch (err) {
    const e = err as { code: number; stderr: string }
    return { code: e.code, stderr: e.stderr }
  }
  throw new Error(`lsreport ${args.join(' ')} unexpectedly succeeded`)
}

/** Starts a long-running `lsreport <command>`, waits until `ready()` answers true. */
export async function spawnCli(
  args: string[],
  env: Record<string, string>,
  ready: () => Promise<boolean>,
  timeoutMs = 60_000,
  bin = BIN,
): Promise<{
  child: ChildProcess
  /** stdout and stderr, interleaved as they came */
  output: () => string
  /** stdout alone */
  stdout: () => string
  stop: () => Promise<void>
}> {
  const child = spawn(process.execPath, [bin, ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  let stdout = ''
  child.stdout?.on('data', (c: Buffer) => {
    output += c.toString()
    stdout += c.toString()
  })
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString()
  })
  const stop = () =>
    new Promise<void>((resolve) => {
      // a child killed by a signal has a signalCode and no exitCode
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill('SIGTERM')
    })
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`lsreport ${args.join(' ')} exited early:\n${output}`)
    if (await ready().catch(() => false)) return { child, output: () => output, stdout: () => stdout, stop }
    await new Promise((r) => setTimeout(r, 200))
  }
  await stop()
  throw new Error(`lsreport ${args.join(' ')} not ready after ${timeoutMs} ms:\n${output}`)
}

/**
 * The environment of a production-shaped service a test starts (Postgres, BullMQ on Redis under a queue prefix
 * of its own, a devnet chain, the test's signing-key secret), plus `extra`.
 *
 * @example
 * const env = deploymentEnv({ dataDir, databaseUrl: database.url, rpcUrl, redisUrl: REDIS_URL })
 */
export function deploymentEnv(
  options: { dataDir: string; databaseUrl: string; redisUrl: string; rpcUrl: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATA_DIR: options.dataDir,
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    QUEUE_PREFIX: `t${randomBytes(4).toString('hex')}`,
    RPC_URL: options.rpcUrl,
    CHAIN: 'devnet',
    LOG_LEVEL: 'warn',
    SIGNING_KEY_SECRET: TEST_SIGNING_KEY_SECRET,
    ...extra,
  }
}
