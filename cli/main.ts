// Each command imports what it needs when it runs: `up` answers /health before the chain and job modules
// are even loaded, and `--help` loads nothing.
import fs from 'node:fs/promises'
import { Command, InvalidArgumentError } from 'commander'
import { LsReportError, ValidationError } from '../common/errors.ts'
import { applyV8Flags } from '../common/v8-flags.ts'
import { RECOMPUTE_REASONS, type RecomputeReason } from '../db/repos/days.ts'
import { DATE_YEARS, parseDateOnly } from '../engine/dates.ts'
import { ENGINE_VERSION } from '../engine/index.ts'
import packageJson from '../package.json' with { type: 'json' }
import { registerAdminCommands } from './admin-commands.ts'
import type { Context } from './context.ts'
import { registerKeysCommands } from './keys-command.ts'
import { registerOpenApiCommand } from './openapi-command.ts'
import { printJsonLine } from './output.ts'

/** Commander's codes for output that is not an error (help, version). */
const USAGE_ERROR_SILENT_CODES = new Set(['commander.helpDisplayed', 'commander.version', 'commander.help'])

const program = new Command()
program
  .name('lsreport')
  .description('Exact LsETH reward, fee and rebate reports; Allowlist onboarding; redemption reads.')
  .version(`${packageJson.version} (engine ${ENGINE_VERSION})`, '-V, --version', 'print the version and exit')
  .showHelpAfterError()
  // usage errors (unknown command or option, a bad or missing argument) exit 2, as Unix tools do; the help and
  // the version exit 0; failures of the work itself exit 1. Subcommands inherit this.
  .exitOverride((err) => {
    process.exit(USAGE_ERROR_SILENT_CODES.has(err.code) ? 0 : 2)
  })

/** Runs a short command against the database, then closes it. */
async function withContext<T>(
  fn: (ctx: Context) => Promise<T>,
  options: { migrate: boolean } = { migrate: true },
): Promise<T> {
  const { createContext } = await import('./context.ts')
  const ctx = await createContext(process.env, { migrate: options.migrate, logTo: 'stderr', quiet: true })
  try {
    return await fn(ctx)
  } finally {
    await ctx.shutdown.run('command finished')
  }
}

program
  .command('up')
  .description(
    'Everything in one process: migrate, API, devnet (when RPC_URL is unset), demo client and account, jobs',
  )
  .action(async () => {
    applyV8Flags()
    return (await import('./up.ts')).up(process.env)
  })

program
  .command('api')
  .description('Serve the HTTP API only')
  .action(async () => {
    applyV8Flags()
    const [{ createContext }, { startApi }] = await Promise.all([import('./context.ts'), import('./up.ts')])
    // an API request waits at most 15 s on a database that went silent, then answers 503 IR5030
    const ctx = await createContext(process.env, { migrate: false, logTo: 'stdout', stallMs: 15_000 })
    ctx.shutdown.installSignalHandlers()
    await startApi(ctx)
  })

program
  .command('worker')
  .description(
    'Run the jobs on BullMQ (REDIS_URL): the chain follower and the allowlist writer; with WORKER_PORT, ' +
      '/health (503 naming a stuck job) and /metrics',
  )
  .action(async () => (await import('./worker.ts')).worker(process.env))

program
  .command('sync')
  .description('Ingest the chain up to head - CONFIRMATIONS once (or keep following with --follow)')
  .option('--follow', 'keep following the chain')
  .option('--interval <ms>', 'milliseconds between passes with --follow', parseWhole, 2000)
  .action((opts: { follow?: boolean; interval: number }) =>
    withContext(async (ctx) => {
      const [{ setupFromConfig, assertChainReady }, { createJobs }] = await Promise.all([
        import('./chain-setup.ts'),
        import('../jobs/index.ts'),
      ])
      const chain = await setupFromConfig(ctx.config)
      const { follower, client } = createJobs({
        db: ctx.dbh.db,
        logger: ctx.logger,
        chain,
        confirmations: ctx.config.confirmations,
      })
      await assertChainReady(ctx.config, chain, client, ctx.logger)
      for (;;) {
        const r = await follower.syncOnce()
        printJsonLine({
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
  .command('doctor')
  .description(
    'Check RPC_URL and CHAIN: chain id, archive reads, contract code, implementation versions, allower, ' +
      'start blocks, latest oracle report; exits 1 at the first failure',
  )
  .option('--json', 'print one JSON object {check, status, message, details} per line')
  .action(async (opts: { json?: boolean }) => {
    const { doctorCommand } = await import('./doctor.ts')
    process.exit(await doctorCommand(process.env, opts))
  })

program
  .command('backfill')
  .description(
    'Compute the days (oracle reports) of a date range with the day jobs, in this process (with REDIS_URL: ' +
      'alongside any running workers); progress on stderr; interrupt and run again to resume',
  )
  .requiredOption('--from <date>', 'first date (YYYY-MM-DD)')
  .requiredOption('--to <date>', 'last date (YYYY-MM-DD)')
  .option('--recompute', 'recompute the days of the range that are already computed')
  .option(
    '--reason <reason>',
    "with --recompute, why (the restatement log's reason of the new versions): discount, 'fee schedule', " +
      "'engine upgrade' or 'recompute requested' (default)",
    parseRecomputeReason,
  )
  .action(async (opts: { from: string; to: string; recompute?: boolean; reason?: RecomputeReason }) => {
    const [{ validateRange }, { backfillCommand }, { runningServiceClient }] = await Promise.all([
      import('../jobs/days/backfill.ts'),
      import('./days.ts'),
      import('./operator-client.ts'),
    ])
    asUsageError(() => validateRange(opts)) // before opening the database
    if (opts.reason !== undefined && opts.recompute !== true)
      program.error('error: --reason goes with --recompute')
    // the embedded database held by a running `lsreport up`: through its admin endpoint
    const running = await runningServiceClient(process.env)
    if (running) {
      const { remoteBackfill } = await import('./backfill-remote.ts')
      process.exit(await remoteBackfill(running, opts))
    }
    process.exit(await withContext((ctx) => backfillCommand(ctx, opts)))
  })

program
  .command('export')
  .description(
    "Export an organization's records or journal lines as CSV through a running service's API (POST /v1/exports), " +
      'as the client of --credentials (default: the embedded demo client); progress on stderr; the file is ' +
      'checked against its sha256',
  )
  .requiredOption('--from <date>', 'first date (YYYY-MM-DD)', parseDate)
  .requiredOption('--to <date>', 'last date (YYYY-MM-DD)', parseDate)
  .option(
    '--granularity <period>',
    'day, month (default), quarter or year',
    parseChoice(['day', 'month', 'quarter', 'year']),
  )
  .option('--kind <kind>', 'records (default) or journal', parseChoice(['records', 'journal']))
  .option('--currency <currency>', 'fiat values besides ETH: usd or eur', parseChoice(['usd', 'eur']))
  .option('--accounts <ids>', 'account ids or keys, comma-separated (default: every account)')
  .option('--api-version <version>', 'v1 (default) or v0 fields', parseChoice(['v1', 'v0']))
  .option('--out <file>', 'where to write the CSV (default: stdout)')
  .option(
    '--credentials <file>',
    'JSON {client_id, client_secret, token_url, audience} of a client with read:eth-rewards ' +
      '(default: $DATA_DIR/demo-client.json, written by `lsreport up`)',
  )
  .action(async (opts: import('./export.ts').ExportOptions) => {
    if (opts.from > opts.to) program.error(`lsreport: --from ${opts.from} is after --to ${opts.to}`)
    const { exportCommand } = await import('./export.ts')
    process.exit(await exportCommand(opts, process.env))
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
  .action(async (opts: { json?: boolean; from?: string; to?: string }) => {
    const { daysCommand } = await import('./days.ts')
    await withContext((ctx) => daysCommand(ctx, opts))
  })

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
      const [{ loadConfig }, { createLogger }, { createShutdown }, { startDevnet }] = await Promise.all([
        import('../common/config.ts'),
        import('../common/logger.ts'),
        import('../common/shutdown.ts'),
        import('../devnet/index.ts'),
      ])
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
      printJsonLine(JSON.parse(await fs.readFile(devnet.devnetFile, 'utf8')))
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
    withContext(
      async (ctx) => {
        const [{ migrate }, { migrationOptions }] = await Promise.all([
          import('../db/index.ts'),
          import('./context.ts'),
        ])
        const applied = await migrate(ctx.dbh.db, migrationOptions(ctx.config))
        // keys made before the key rules: listed, never changed (db/migrations/010_account_key_problems.ts)
        const [problems] = await ctx.dbh.db('account_key_problems').count<{ n: string }[]>({ n: '*' })
        const accountKeyProblems = Number(problems?.n ?? 0)
        if (accountKeyProblems > 0) {
          process.stderr.write(
            `lsreport migrate: ${accountKeyProblems} account key problem(s) predate the key rules: ` +
              'select * from account_key_problems\n',
          )
        }
        printJsonLine({ backend: ctx.dbh.backend, applied, account_key_problems: accountKeyProblems })
      },
      { migrate: false },
    ),
  )

registerAdminCommands(program, withContext)
registerKeysCommands(program, withContext)
registerOpenApiCommand(program)

function parseWhole(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number')
  return Number(value)
}

/** An argument refused by a check that needs no database: a usage error (exit 2), like commander's own. */
function asUsageError(check: () => void): void {
  try {
    check()
  } catch (err) {
    if (err instanceof ValidationError) program.error(`lsreport: ${err.message}`)
    throw err
  }
}

function parseRecomputeReason(value: string): RecomputeReason {
  const reason = RECOMPUTE_REASONS.find((r) => r === value)
  if (reason === undefined) throw new InvalidArgumentError(`expected one of: ${RECOMPUTE_REASONS.join(', ')}`)
  return reason
}

function parseChoice(values: readonly string[]) {
  return (value: string): string => {
    if (!values.includes(value)) throw new InvalidArgumentError(`expected one of: ${values.join(', ')}`)
    return value
  }
}

function parseDate(value: string): string {
  try {
    parseDateOnly(value)
  } catch {
    throw new InvalidArgumentError(`expected a date YYYY-MM-DD from ${DATE_YEARS.min}-01-01`)
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
