import { ConfigError } from './errors.ts'

/**
 * The embedded start's parts (PGlite, anvil, solc) are dev dependencies: a production install
 * (`npm ci --omit=dev`, the Docker image) has none of them and runs on Postgres (DATABASE_URL) and a real chain
 * (RPC_URL). A command that reaches for one there stops with a `MissingDevDependencyError` saying what to set.
 */

/**
 * True when `err` (or its cause) says `pkg` could not be found: ESM's ERR_MODULE_NOT_FOUND or require's
 * MODULE_NOT_FOUND, naming the package (one of its platform packages counts, e.g. `@foundry-rs/anvil-linux-x64`).
 *
 * @example
 * isMissingPackage(err, '@electric-sql/pglite') // true for the error of loading PGlite after npm ci --omit=dev
 */
export function isMissingPackage(err: unknown, pkg: string): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown }
    if (
      (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
      typeof message === 'string' &&
      message.includes(`'${pkg}`)
    )
      return true
    e = (e as { cause?: unknown }).cause
  }
  return false
}

/** A dev dependency a command needs is not installed; the message names it and what to configure instead. */
export class MissingDevDependencyError extends ConfigError {
  override name = 'MissingDevDependencyError'

  /**
   * @example
   * new MissingDevDependencyError('@electric-sql/pglite', 'the embedded database (PGlite)', 'set DATABASE_URL')
   */
  constructor(pkg: string, feature: string, instead: string, cause?: unknown) {
    super(
      `${feature} needs the dev dependency ${pkg}, which this production install (npm ci --omit=dev) ` +
        `does not have: ${instead}, or install the dev dependencies (npm ci)`,
      { details: { package: pkg }, cause },
    )
  }
}
