import type { Command } from 'commander'
import type { WithContext } from './context.ts'

/**
 * Registers `lsreport keys list` and `lsreport keys rotate` on `program`; their work (cli/keys.ts) is imported
 * when one runs.
 *
 * @example
 * registerKeysCommands(program, withContext)
 */
export function registerKeysCommands(program: Command, withContext: WithContext): void {
  const keys = program
    .command('keys')
    .description('Token signing keys, shared by every API process (docs/operations.md "Token signing keys")')
  keys
    .command('list')
    .description(
      'The signing keys, newest first: kid, created, retires at, status (current, retiring, retired)',
    )
    .option('--json', 'print one JSON line per key: {kid, created_at, retires_at, status, source}')
    .action((opts: { json?: boolean }) =>
      withContext(async (ctx) => (await import('./keys.ts')).keysList(ctx, opts)),
    )
  keys
    .command('rotate')
    .description(
      'Add a signing key that signs from now on; the previous one verifies until its tokens expire, then retires',
    )
    .option('--json', 'print {kid, created_at, status, replaced_kid, replaced_retires_at} as one JSON line')
    .action((opts: { json?: boolean }) =>
      withContext(async (ctx) => (await import('./keys.ts')).keysRotate(ctx, opts)),
    )
}
