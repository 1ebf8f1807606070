import fs from 'node:fs/promises'
import { Command, InvalidArgumentError } from 'commander'
import { Redis } from 'ioredis'
import { loadSigningKey } from '../api/auth/keys.ts'
import { startServer } from '../api/server.ts'
import { assertChainId } from '../chain/client.ts'
import { loadConfig } from '../common/config.ts'
import { ConfigError, LsReportError } from '../common/errors.ts'
import { createLogger } from '../common/logger.ts'
import { createShutdown } from '../common/shutdown.ts'
import { migrate } from '../db/index.ts'
import { startDevnet } from '../devnet/index.ts'
import { validateRange } from '../jobs/days/backfill.ts'
import { type ChainSetup, createJobs, JOBS } from '../jobs/index.ts'
import { createBullRunner, createInlineRunner } from '../jobs/runner.ts'
import {
  addClientSecret,
  createClient,
  createOrg,
  denyAccount,
  ensureDemoClient,
  revokeClient,
} from './admin.ts'
import { setupFromConfig, setupFromDevnet } from './chain-setup.ts'
import { type Context, createContext } from './context.ts'
import { backfillCommand, daysCommand } from './days.ts'

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
  // the rate-limit store is shared through Redis when there is one
  const redis = ctx.config.redisUrl ? new Redis(ctx.config.redisUrl, { maxRetriesPerRequest: 3 }) : undefined
  if (redis) ctx.shutdown.add('rate-limit redis', () => void redis.disconnect())
  const { app, url } = await startServer({
    config: ctx.config,
    logger: ctx.logger,
    db: ctx.dbh.db,
    signingKey,
    redis,
  })
  ctx.shutdown.add('api', () => app.close())
  ctx.logger.info({ url, docs: `${url}/docs`, backend: ctx.dbh.backend }, 'api listening')
  return url
}

/** Starts the embedded devnet (anvil + simulator) and registers its shutdown. */
async function startLocalDevnet(ctx: Context) {
  const devnet = await startDevnet({
    dataDir: ctx.config.dataDir,
    logger: ctx.logger.child({ component: 'devnet' }),
  })
  ctx.shutdown.add('devnet', () => devnet.stop())
  return devnet
}

/** Builds the jobs over the chain and runs them: BullMQ when REDIS_URL is set, else the inline runner. */
async function startJobs(ctx: Context, chain: ChainSetup) {
  const jobs = createJobs({
    db: ctx.dbh.db,
    logger: ctx.logger,
    chain,
    confirmations: ctx.config.confirmations,
    shardWallets: ctx.config.dayShardWallets,
  })
  await assertChainId(jobs.client, chain.chainId)
  const runner = ctx.config.redisUrl
    ? createBullRunner(jobs.processors, {
        redisUrl: ctx.config.redisUrl,
        prefix: ctx.config.queuePrefix,
        concurrency: ctx.config.workerConcurrency,
        lockMs: ctx.config.jobLockMs,
        logger: ctx.logger,
      })
    : createInlineRunner(jobs.processors, ctx.logger)
  jobs.useRunner(runner)
  ctx.shutdown.add('jobs', () => runner.close())
  await runner.start()
  for (const job of Object.values(JOBS)) {
    if (jobs.processors[job.name]) await runner.every(job.name, job.everyMs)
  }
  ctx.logger.info(
    { runner: runner.kind, jobs: Object.keys(jobs.processors), chain_id: chain.chainId },
    'jobs started',
  )
  return { jobs, runner }
}

program
  .command('up')
  .description('Everything in one process: migrate, devnet (when RPC_URL is unset), follower, jobs, api')
  .action(async () => {
    const ctx = await createContext(process.env, { migrate: true, logTo: 'stdout' })
    ctx.shutdown.installSignalHandlers()
    const devnet = ctx.config.rpcUrl ? undefined : await startLocalDevnet(ctx)
    const chain = devnet ? setupFromDevnet(devnet) : await setupFromConfig(ctx.config)
    await startJobs(ctx, chain)
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
        (devnet ? `Local chain (anvil devnet): ${devnet.rpcUrl} (contracts: ${devnet.devnetFile})\n` : '') +
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
  .command('worker')
  .description('Run the jobs on BullMQ (REDIS_URL): the chain follower and the allowlist writer')
  .action(async () => {
    const ctx = await createContext(process.env, { migrate: false, logTo: 'stdout' })
    ctx.shutdown.installSignalHandlers()
    if (!ctx.config.redisUrl)
      throw new ConfigError('REDIS_URL is required for `lsreport worker` (`lsreport up` runs jobs inline)')
    await startJobs(ctx, await setupFromConfig(ctx.config))
  })

program
  .command('sync')
  .description('Ingest the chain up to head - CONFIRMATIONS once (or keep following with --follow)')
  .option('--follow', 'keep following the chain')
  .option('--interval <ms>', 'milliseconds between passes with --follow', parseWhole, 2000)
  .action((opts: { follow?: boolean; interval: number }) =>
    withContext(async (ctx) => {
      const chain = await setupFromConfig(ctx.config)
      const { follower, client } = createJobs({
        db: ctx.dbh.db,
        logger: ctx.logger,
        chain,
        confirmations: ctx.config.confirmations,
      })
      await assertChainId(client, chain.chainId)
      for (;;) {
        const r = await follower.syncOnce()
        printJson({
          head: r.head.toString(),
          synced_to: r.target.toString(),
          inserted: r.inserted,
          reports: r.reports,
        })
        if (!opts.follow) break
        await new Promise((resolve) => setTimeout(resolve, opts.interval))
      }
    }),
  )

program
  .command('backfill')
  .description(
    'Compute the days (oracle reports) of a date range with the day jobs, in this process (with REDIS_URL: ' +
      'alongside any running workers); progress on stderr; interrupt and run again to resume',
  )
  .requiredOption('--from <date>', 'first date (YYYY-MM-DD)')
  .requiredOption('--to <date>', 'last date (YYYY-MM-DD)')
  .option('--recompute', 'recompute the days of the range that are already computed')
  .action(async (opts: { from: string; to: string; recompute?: boolean }) => {
    validateRange(opts) // before opening the database
    process.exit(await withContext((ctx) => backfillCommand(ctx, opts)))
  })

program
  .command('days')
  .description(
    'The days (one per oracle report): computed, pending or failed, with engine version and timings',
  )
  .option(
    '--json',
    'print a JSON array of {date, report_epoch, status, wallets, engine_version, computed_at}',
  )
  .option('--from <date>', 'first date (YYYY-MM-DD)')
  .option('--to <date>', 'last date (YYYY-MM-DD)')
  .action((opts: { json?: boolean; from?: string; to?: string }) =>
    withContext((ctx) => daysCommand(ctx, opts)),
  )

program
  .command('devnet')
  .description(
    'Start a local anvil devnet with the simulator contracts and keep simulating a day every few seconds',
  )
  .option('--days <n>', 'days of history to build first', '91')
  .option('--wallets <n>', 'simulated wallets', '200')
  .option('--start-date <date>', 'date of the first report (YYYY-MM-DD)', '2026-04-01')
  .option('--day-interval <ms>', 'wall-clock milliseconds per simulated day afterwards (0: none)', '5000')
  .option('--port <port>', 'RPC port (0: free port)', '0')
  .option('--seed <seed>', 'simulator seed', '1')
  .action(
    async (opts: {
      days: string
      wallets: string
      startDate: string
      dayInterval: string
      port: string
      seed: string
    }) => {
      const config = loadConfig(process.env)
      const logger = createLogger({ level: config.logLevel, destination: 2 })
      const shutdown = createShutdown(logger)
      shutdown.installSignalHandlers()
      const devnet = await startDevnet({
        dataDir: config.dataDir,
        days: Number(parseDate(opts.startDate) && opts.days),
        walletCount: Number(opts.wallets),
        startDate: opts.startDate,
        dayIntervalMs: Number(opts.dayInterval),
        port: Number(opts.port),
        seed: opts.seed,
        logger,
      })
      shutdown.add('devnet', () => devnet.stop())
      printJson(JSON.parse(await fs.readFile(devnet.devnetFile, 'utf8')))
      process.stderr.write(
        `\ndevnet running at ${devnet.rpcUrl}; point the service at it with\n` +
          `  RPC_URL=${devnet.rpcUrl} CHAIN=devnet DATA_DIR=${config.dataDir} npx lsreport api|worker|sync\n\n`,
      )
    },
  )

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

function parseWhole(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number')
  return Number(value)
}

function parseDate(value: string): string {
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
