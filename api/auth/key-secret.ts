import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { type Config, decodeKeySecret } from '../../common/config.ts'
import { ConfigError } from '../../common/errors.ts'

/** Where the embedded (single-node) setup keeps its signing-key secret when SIGNING_KEY_SECRET is unset. */
export const SECRET_FILE = 'signing-key-secret'

/**
 * The secret the signing keys are sealed under (docs/operations.md "Token signing keys"): SIGNING_KEY_SECRET
 * when set. Unset with DATABASE_URL: a `ConfigError` (several processes share the keys, so they must share the
 * secret, which only the operator can give them all). Unset on the embedded database (one process per data
 * directory): `$DATA_DIR/signing-key-secret`, made (mode 0600) on first use.
 *
 * @example
 * const secret = await signingKeySecret(config) // 32 bytes
 */
export async function signingKeySecret(
  config: Pick<Config, 'signingKeySecret' | 'databaseUrl' | 'dataDir'>,
): Promise<Buffer> {
  if (config.signingKeySecret) return config.signingKeySecret
  if (config.databaseUrl) {
    throw new ConfigError(
      'SIGNING_KEY_SECRET is required with DATABASE_URL: the token signing keys are shared through the database, ' +
        'encrypted under it, and every API process needs the same one (make one with `openssl rand -base64 32`)',
    )
  }
  const file = path.join(config.dataDir, SECRET_FILE)
  const text = await readIfExists(file)
  if (text !== undefined) return decoded(text, file)
  const made = randomBytes(32).toString('base64')
  await fs.mkdir(config.dataDir, { recursive: true })
  try {
    await fs.writeFile(file, `${made}\n`, { mode: 0o600, flag: 'wx' })
    return decoded(made, file)
  } catch (err) {
    // another process made it first: use its secret
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    return decoded(await fs.readFile(file, 'utf8'), file)
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

function decoded(text: string, file: string): Buffer {
  const secret = decodeKeySecret(text)
  if (!secret) throw new ConfigError(`${file} must hold 32 bytes as 64 hex digits or base64`)
  return secret
}
