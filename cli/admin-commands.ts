import { type Command, InvalidArgumentError } from 'commander'
import { parseScopes, SCOPES } from '../api/auth/scopes.ts'
import type { WithContext } from './context.ts'
import { printResult } from './output.ts'

const admin = () => import('./admin.ts')

/**
 * Registers the operator's admin commands on `program`: `orgs create|delegate|undelegate`,
 * `clients create|add-secret|revoke-old-secrets|revoke`, `accounts deny` (their work is in cli/admin.ts, imported when one runs).
 * Each prints a record for a person, or one JSON line with `--json`.
 *
 * @example
 * registerAdminCommands(program, withContext)
 */
export function registerAdminCommands(program: Command, withContext: WithContext): void {
  const orgs = program.command('orgs').description('Organizations (platforms)')
  orgs
    .command('create')
    .description('Create an organization')
    .requiredOption('--name <name>', 'display name', parseName)
    .option('--no-allowlist', 'secondary-interaction platform: may add wallets to the On-Platform list only')
    .option(
      '--operator',
      'operator organization: its impersonate:org clients may act as any organization (reads and writes)',
    )
    .option('--json', 'print the org as one JSON line')
    .action((opts: { name: string; allowlist: boolean; operator?: boolean; json?: boolean }) =>
      withContext(async (ctx) =>
        printResult(
          opts,
          'organization created',
          await (await admin()).createOrg(ctx.dbh.db, {
            name: opts.name,
            canAllowlist: opts.allowlist,
            operator: opts.operator === true,
          }),
        ),
      ),
    )
  const delegations = [
    {
      name: 'delegate',
      description:
        'Name a delegate: the impersonate:org clients of --to may act as --org, reads and writes (Impersonate-Org); audited',
      change: 'delegateOrg',
    },
    {
      name: 'undelegate',
      description: 'Drop a delegate: the next Impersonate-Org request of --to as --org is refused; audited',
      change: 'undelegateOrg',
    },
  ] as const
  for (const { name, description, change } of delegations) {
    orgs
      .command(name)
      .description(description)
      .requiredOption('--org <org_id>', 'the organization acted as')
      .requiredOption('--to <org_id>', 'the delegate organization')
      .option('--json', 'print {org_id, delegate_org_id, delegated, changed} as one JSON line')
      .action((opts: { org: string; to: string; json?: boolean }) =>
        withContext(async (ctx) =>
          printResult(
            opts,
            'delegation',
            await (await admin())[change](ctx.dbh.db, { orgId: opts.org, delegateOrgId: opts.to }),
          ),
        ),
      )
  }

  const clients = program.command('clients').description('API clients (OAuth2 client credentials)')
  clients
    .command('create')
    .description('Create an API client; the secret is printed once')
    .requiredOption('--org <org_id>', 'owning organization')
    .requiredOption(
      '--scopes <scopes>',
      'space-separated scopes, e.g. "read:platform write:platform"',
      parseScopeList,
    )
    .option('--name <name>', 'label')
    .option('--json', 'print {client_id, client_secret, scopes, org_id} as one JSON line')
    .action((opts: { org: string; scopes: string; name?: string; json?: boolean }) =>
      withContext(async (ctx) =>
        printResult(
          opts,
          'client created (the secret is shown this once)',
          await (await admin()).createClient(
            ctx.dbh.db,
            { orgId: opts.org, scopes: opts.scopes, ...(opts.name ? { name: opts.name } : {}) },
            ctx.config.limits,
          ),
        ),
      ),
    )
  clients
    .command('add-secret')
    .description('Add a secret to a client (rotation); prints it once')
    .argument('<client_id>')
    .option('--json', 'print {client_id, client_secret} as one JSON line')
    .action((clientId: string, opts: { json?: boolean }) =>
      withContext(async (ctx) =>
        printResult(
          opts,
          'secret added (shown this once)',
          await (await admin()).addClientSecret(ctx.dbh.db, clientId, ctx.config.limits),
        ),
      ),
    )
  clients
    .command('revoke-old-secrets')
    .description('Revoke every secret of a client but the newest (the end of a rotation)')
    .argument('<client_id>')
    .option('--json', 'print {client_id, secrets_revoked} as one JSON line')
    .action((clientId: string, opts: { json?: boolean }) =>
      withContext(async (ctx) =>
        printResult(
          opts,
          'older secrets revoked',
          await (await admin()).revokeOldClientSecrets(ctx.dbh.db, clientId),
        ),
      ),
    )
  clients
    .command('revoke')
    .description('Revoke an API client (its tokens stop being issued)')
    .argument('<client_id>')
    .option('--json', 'print the revoked client as one JSON line')
    .action((clientId: string, opts: { json?: boolean }) =>
      withContext(async (ctx) =>
        printResult(opts, 'client revoked', await (await admin()).revokeClient(ctx.dbh.db, clientId)),
      ),
    )

  const accounts = program.command('accounts').description('Operator commands on accounts')
  accounts
    .command('deny')
    .description('Put an account in DENIED (final for the platform)')
    .requiredOption('--org <org_id>', 'owning organization')
    .requiredOption('--account <idOrKey>', 'account id or key')
    .option('--json', 'print the account as one JSON line')
    .action((opts: { org: string; account: string; json?: boolean }) =>
      withContext(async (ctx) =>
        printResult(
          opts,
          'account denied',
          await (await admin()).denyAccount(ctx.dbh.db, { orgId: opts.org, account: opts.account }),
        ),
      ),
    )
}

/** `--scopes`: every scope known, at least one (a usage error otherwise). */
function parseScopeList(value: string): string {
  const { scopes, unknown } = parseScopes(value)
  if (unknown.length > 0)
    throw new InvalidArgumentError(`unknown scope(s): ${unknown.join(' ')} (known: ${SCOPES.join(' ')})`)
  if (scopes.length === 0) throw new InvalidArgumentError('name at least one scope')
  return value
}

/** `--name`: not blank. */
function parseName(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty')
  return value
}
