import { Command, InvalidArgumentError } from 'commander'
import { loadSigningKey } from '../api/auth/keys.ts'
import { startServer } from '../api/server.ts'
import { LsReportError } from '../common/errors.ts'
import { migrate } from '../db/index.ts'
import {
  addClientSecret,
  createClient,
  createOrg,
  denyAccount,
  ensureDemoClient,
  revokeClient,
} from './admin.ts'
import { type Context, createContext } from './context.ts'

const program = new Command()
program
  .name('lsreport')
  .description('Exact LsETH reward, fee and rebate reports; Allowlist onboarding; redemption reads.')
  .showHelpAfterError()

function printJson(value: unknown) {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
}

/** Runs a short command against the database, then closes it. */
async function withContext<T>(fn: (ctx: Context) => Promise<T>): Promise<T> {
  const ctx = await createContext(process.env, { migrate: true, logTo: 'stderr', quiet: true })
  try {
    return await fn(ctx)
  } finally {
    await ctx.shutdown.run('command finished')
  }
}

async function startApi(ctx: Context) {
  const signingKey = await loadSigningKey({ pem: ctx.config.jwtPrivateKey, dataDir: ctx.config.dataDir })
  const { app, url } = await startServer({
    config: ctx.config,
    logger: ctx.logger,
    db: ctx.dbh.db,
    signingKey,
  })
  ctx.shutdown.add('api', () => app.close())
  ctx.logger.info({ url, docs: `${url}/docs`, backend: ctx.dbh.backend }, 'api listening')
  return url
}

program
  .command('up')
  .description('Everything in one process: migrate, devnet (when RPC_URL is unset), follower, jobs, api')
  .action(async () => {
    const ctx = await createContext(process.env, { migrate: true, logTo: 'stdout' })
    ctx.shutdown.installSignalHandlers()
    const { file, demo, created } = await ensureDemoClient(ctx.dbh.db, {
      dataDir: ctx.config.dataDir,
      baseUrl: ctx.config.baseUrl,
      authUrl: ctx.config.authUrl,
    })
    const url = await startApi(ctx)
    ctx.logger.info(
      { demo_client_file: file, client_id: demo.client_id, org_id: demo.org_id, created },
      'demo client credentials written',
    )
    process.stderr.write(
      `\nlsreport is up at ${url} (OpenAPI: ${url}/docs)\n` +
        `Demo client credentials: ${file}\n` +
        `  curl -s ${demo.token_url} -H 'content-type: application/json' \\\n` +
        `    -d '{"grant_type":"client_credentials","audience":"${demo.audience}","client_id":"${demo.client_id}","client_secret":"<client_secret from the file>"}'\n\n`,
    )
  })

program
  .command('api')
  .description('Serve the HTTP API only')
  .action(async () => {
    const ctx = await createContext(process.env, { migrate: false, logTo: 'stdout' })
    ctx.shutdown.installSignalHandlers()
    await startApi(ctx)
  })

program
  .command('migrate')
  .description('Apply pending database migrations')
  .action(() =>
    withContext(async (ctx) => {
      const applied = await migrate(ctx.dbh.db)
      printJson({ backend: ctx.dbh.backend, applied })
    }),
  )

const orgs = program.command('orgs').description('Organizations (platforms)')
orgs
  .command('create')
  .description('Create an organization')
  .requiredOption('--name <name>', 'display name')
  .option('--no-allowlist', 'secondary-interaction platform: may add wallets to the On-Platform list only')
  .option('--json', 'print the org as JSON (default)')
  .action((opts: { name: string; allowlist: boolean }) =>
    withContext(async (ctx) =>
      printJson(await createOrg(ctx.dbh.db, { name: opts.name, canAllowlist: opts.allowlist })),
    ),
  )

const clients = program.command('clients').description('API clients (OAuth2 client credentials)')
clients
  .command('create')
  .description('Create an API client; the secret is printed once')
  .requiredOption('--org <org_id>', 'owning organization')
  .requiredOption('--scopes <scopes>', 'space-separated scopes, e.g. "read:platform write:platform"')
  .option('--name <name>', 'label')
  .option('--json', 'print {client_id, client_secret, scopes} as JSON (default)')
  .action((opts: { org: string; scopes: string; name?: string }) =>
    withContext(async (ctx) =>
      printJson(
        await createClient(ctx.dbh.db, {
          orgId: opts.org,
          scopes: opts.scopes,
          ...(opts.name ? { name: opts.name } : {}),
        }),
      ),
    ),
  )
clients
  .command('add-secret')
  .description('Add a secret to a client (rotation); prints it once')
  .argument('<client_id>')
  .action((clientId: string) =>
    withContext(async (ctx) => printJson(await addClientSecret(ctx.dbh.db, clientId))),
  )
clients
  .command('revoke')
  .description('Revoke an API client (its tokens stop being issued)')
  .argument('<client_id>')
  .action((clientId: string) =>
    withContext(async (ctx) => printJson(await revokeClient(ctx.dbh.db, clientId))),
  )

const accounts = program.command('accounts').description('Operator commands on accounts')
accounts
  .command('deny')
  .description('Put an account in DENIED (final for the platform)')
  .requiredOption('--org <org_id>', 'owning organization')
  .requiredOption('--account <idOrKey>', 'account id or key')
  .option('--json', 'print the account as JSON (default)')
  .action((opts: { org: string; account: string }) =>
    withContext(async (ctx) =>
      printJson(await denyAccount(ctx.dbh.db, { orgId: opts.org, account: opts.account })),
    ),
  )

export function parseDate(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new InvalidArgumentError('expected a date YYYY-MM-DD')
  }
  return value
}

try {
  await program.parseAsync(process.argv)
} catch (err) {
  if (err instanceof LsReportError) {
    process.stderr.write(`lsreport: ${err.message}\n`)
    process.exit(1)
  }
  throw err
}
