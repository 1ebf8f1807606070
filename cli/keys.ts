import { signingKeySecret } from '../api/auth/key-secret.ts'
import { type KeyState, keyStates, statusAt } from '../api/auth/key-states.ts'
import { rotateSigningKey } from '../api/auth/key-store.ts'
import { createRepos } from '../db/repos/index.ts'
import type { Context } from './context.ts'
import { formatTable, printJsonLine, printResult } from './output.ts'

/** A signing key as `lsreport keys list --json` prints it (one JSON line per key, newest first). */
export function keyJson(state: KeyState, nowMs: number) {
  return {
    kid: state.row.kid,
    created_at: state.row.created_at.toISOString(),
    retires_at: state.retiresAt ? state.retiresAt.toISOString() : null,
    status: statusAt(state, nowMs),
    source: state.row.source,
  }
}

/** The signing keys as a plain-text table (for humans). */
export function formatKeysTable(keys: readonly ReturnType<typeof keyJson>[]): string {
  const header = ['kid', 'created_at', 'retires_at', 'status', 'source']
  const rows = keys.map((k) => [k.kid, k.created_at, k.retires_at ?? '-', k.status, k.source])
  return formatTable(header, rows)
}

/**
 * `lsreport keys list [--json]`: every signing key, newest first, with its status at this moment (`current`,
 * `retiring` until `retires_at`, `retired`), worked out with this process's TOKEN_TTL_SECONDS.
 */
export async function keysList(ctx: Context, opts: { json?: boolean }): Promise<void> {
  const states = keyStates(await createRepos(ctx.dbh.db).signingKeys.list(), ctx.config.tokenTtlSeconds)
  const now = Date.now()
  const keys = states.map((state) => keyJson(state, now))
  if (opts.json) for (const key of keys) printJsonLine(key)
  else process.stdout.write(`${formatKeysTable(keys)}\n`)
}

/**
 * `lsreport keys rotate [--json]`: a new signing key, current from now on (each API process signs with it
 * within 5 s); the key it replaces verifies until `replaced_retires_at` (one token lifetime and a grace later),
 * then retires by itself. Needs the secret the keys are sealed under (SIGNING_KEY_SECRET, or the embedded
 * database's own).
 */
export async function keysRotate(ctx: Context, opts: { json?: boolean }): Promise<void> {
  const { added, replaced } = await rotateSigningKey(ctx.dbh.db, await signingKeySecret(ctx.config))
  const [current, previous] = keyStates(replaced ? [added, replaced] : [added], ctx.config.tokenTtlSeconds)
  printResult(opts, 'signing key rotated', {
    kid: added.kid,
    created_at: added.created_at.toISOString(),
    status: current ? statusAt(current, Date.now()) : 'current',
    replaced_kid: replaced?.kid ?? null,
    replaced_retires_at: previous?.retiresAt?.toISOString() ?? null,
  })
}
