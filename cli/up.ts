// Only what serves the API is imported up front; the chain, devnet and job modules (about half of the
// start's module loading) are imported once the API answers.
import path from 'node:path'
import v8 from 'node:v8'
import { signingKeySecret } from '../api/auth/key-secret.ts'
import { openSigningKeys } from '../api/auth/signing-keys.ts'
import { startServer } from '../api/server.ts'
import { memoizeSuccess } from '../common/memo.ts'
import { migrate } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import type { DaySummary } from '../devnet/index.ts'
import type { ChainSetup } from '../jobs/index.ts'
import type { Processor } from '../jobs/runner.ts'
import { createServiceMetrics, instrumentProcessors, type ServiceMetrics } from '../metrics/index.ts'
import { type DemoAccount, type DemoClient, ensureDemoClient } from './admin.ts'
import { type Context, createContext, migrationOptions } from './context.ts'
import { ensureOperatorClient } from './operator-client.ts'
import { createPhaseProgress, createStartLog, type StartLog, shown } from './start-log.ts'
import { HISTORY_DAYS, joinUpDevnet, RESUMED_DEVNET_SKIPS, startUpDevnet } from './up-devnet.ts'

/** The demo account's key, and how many devnet wallets it holds. */
export const DEMO_ACCOUNT_KEY = 'demo'
const DEMO_WALLETS = 3
/** How often the start looks at the days while the follower catches up. */
const POLL_MS = 500
/** The banner is printed once the history's days are computed, or after this long anyway. */
const CATCH_UP_LIMIT_MS = 180_000

/**
 * Starts the HTTP API (`lsreport api` and `up`); returns the URL it listens on. `metrics`: the process's
 * metrics when jobs run in it too (`up`), else the API builds its own.
 */
export async function startApi(ctx: Context, metrics?: ServiceMetrics) {
  // the shared signing keys: refused with DATABASE_URL and no SIGNING_KEY_SECRET; the first start makes the first key
  const signingKeys = await openSigningKeys({ db: ctx.dbh.db, config: ctx.config, logger: ctx.logger })
  // the rate-limit store is shared through Redis when there is one
  const redis = ctx.config.redisUrl
    ? new (await import('ioredis')).Redis(ctx.config.redisUrl, { maxRetriesPerRequest: 3 })
    : undefined
  if (redis) ctx.shutdown.add('rate-limit redis', () => void redis.disconnect())
  const { app, url } = await startServer({
    config: ctx.config,
    logger: ctx.logger,
    db: ctx.dbh.db,
    signingKeys,
    redis,
    metrics,
  })
  ctx.shutdown.add('api', () => app.close())
  ctx.logger.info({ url, docs: `${url}/docs`, backend: ctx.dbh.backend }, 'api listening')
  return url
}

/**
 * Builds the jobs over the chain: BullMQ when REDIS_URL is set, else the inline runner. `start` runs them;
 * before it, the follower may be used directly (to see the chain head). `wrap` wraps the processors the
 * runner runs (`lsreport worker`: watched for /health and timed for its /metrics); `skipChecks`: doctor checks
 * not run.
 */
export async function buildJobs(
  ctx: Context,
  chain: ChainSetup,
  metrics?: ServiceMetrics,
  wrap?: (processors: Record<string, Processor>) => Record<string, Processor>,
  skipChecks?: readonly string[],
) {
  const [{ createJobs, JOBS }, { buildRunner }, { assertChainReady }] = await Promise.all([
    import('../jobs/index.ts'),
    import('./runner.ts'),
    import('./chain-setup.ts'),
  ])
  const jobs = createJobs({
    db: ctx.dbh.db,
    logger: ctx.logger,
    chain,
    confirmations: ctx.config.confirmations,
    shardWallets: ctx.config.dayShardWallets,
    webhooks: ctx.config.webhooks,
    // the webhook secrets are sealed under the API's SIGNING_KEY_SECRET: read when the first delivery needs it
    webhookSealingKey: memoizeSuccess(() => signingKeySecret(ctx.config)),
  })
  // the doctor's checks: a wrong chain or a node without historical state stops here, with its message
  await assertChainReady(ctx.config, chain, jobs.client, ctx.logger, skipChecks)
  // jobs run in the API's process (`up`): their durations are observed, the inline queue counted
  const wrapped = wrap ? wrap(jobs.processors) : jobs.processors
  const processors = metrics ? instrumentProcessors(wrapped, metrics) : wrapped
  const runner = buildRunner(ctx, processors, jobs.inlineConcurrency)
  jobs.useRunner(runner)
  if (metrics && runner.kind === 'inline') metrics.useQueue(runner)
  metrics?.useRpc(chain.rpcUrl)
  // closed in reverse order: the runner stops first, then the webhook attempts in flight finish
  ctx.shutdown.add('webhook deliveries', () => jobs.drainWebhooks())
  ctx.shutdown.add('jobs', () => runner.close())
  return {
    jobs,
    runner,
    async start() {
      await runner.start()
      for (const job of Object.values(JOBS)) {
        if (jobs.processors[job.name]) await runner.every(job.name, job.everyMs)
      }
      ctx.logger.info(
        { runner: runner.kind, jobs: Object.keys(jobs.processors), chain_id: chain.chainId },
        'jobs started',
      )
    },
  }
}

/** Waits until the first `total` days are computed, showing the follower and the day jobs catching up. */
async function followCatchUp(
  ctx: Context,
  log: StartLog,
  chainId: number,
  total: number,
  stopping: () => boolean,
) {
  const repos = createRepos(ctx.dbh.db)
  const started = Date.now()
  const progress = createPhaseProgress(log, 'days', 'days computed', total)
  while (!stopping()) {
    const days = await repos.days.list(chainId, {})
    const computed = days.filter((d) => d.status === 'computed').length
    progress.update(Math.min(computed, total), `(${days.length} reports ingested)`)
    const failed = days.find((d) => d.status === 'failed')
    if (failed) {
      progress.done(`day ${failed.date} failed: ${failed.error ?? 'unknown error'} (see \`lsreport days\`)`)
      return
    }
    if (computed >= total) {
      progress.done(`follower caught up: ${days.length} reports ingested, ${computed} days computed`)
      return
    }
    if (Date.now() - started > CATCH_UP_LIMIT_MS) {
      progress.done(`${computed}/${total} days computed so far; the rest follow in the background`)
      return
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

/** The ready-to-paste lines for the demo client: a token, then the demo account's rewards and redemptions. */
export function demoBanner(url: string, file: string, demo: DemoClient): string {
  const auth = `-H "authorization: Bearer $TOKEN"`
  const lines = [
    `lsreport is up at ${url} (OpenAPI: ${url}/docs). Try it (needs curl and jq):`,
    '',
    `  TOKEN=$(curl -s ${demo.token_url} -H 'content-type: application/json' \\`,
    `    -d "{\\"grant_type\\":\\"client_credentials\\",\\"audience\\":\\"${demo.audience}\\",\\"client_id\\":\\"${demo.client_id}\\",\\"client_secret\\":\\"$(jq -r .client_secret ${shown(file)})\\"}" \\`,
    `    | jq -r .access_token)`,
  ]
  const account = demo.account
  const wallet = account?.wallets[0]
  if (account && wallet) {
    lines.push(
      `  curl -s ${url}/v0/platform/accounts/${account.key} ${auth} | jq '.wallets[] | {address, status}'`,
      `  curl -s ${url}/eth/v1/rewards/accounts/${account.key}/summary ${auth} | jq .totals`,
      `  curl -s ${url}/eth/v1/rewards/wallets/${wallet}/summary ${auth} | jq '{from, to, totals}'`,
      `  curl -s "${url}/eth/v1/redeems?owner=${account.wallets.join(',')}" | jq 'length'`,
    )
  }
  lines.push('', `(credentials: ${shown(file)}; more examples in README.md, "For platforms")`, '')
  return `\n${lines.join('\n')}\n`
}

/**
 * `lsreport up`: everything in one process. In order, each phase printing one line on stderr: the database
 * (PGlite from its template, migrations), the API (answers from here on), the devnet's contracts (when
 * RPC_URL is unset), the demo client and its account of devnet wallets (registered before the history, so
 * they count from the first report), the devnet history (a progress bar on a terminal) while the jobs
 * ingest it, the follower and day jobs catching up, then the banner with ready-to-paste curl lines.
 */
export async function up(env: NodeJS.ProcessEnv): Promise<void> {
  // The embedded start keeps little alive (~70 MB of heap) but allocates fast while the history is built
  // and ingested; V8's default heap growth lets ~200 MB of garbage pile up before a full collection.
  // Growing the heap by 10% at a time collects sooner: ~100 MB less RSS for the same CPU (bench:start).
  v8.setFlagsFromString('--heap-growing-percent=10')
  const log = createStartLog(process.stderr)
  // on a terminal, the phase lines tell the story; JSON logs from `warn` unless LOG_LEVEL says otherwise
  const ctx = await createContext(env, { migrate: false, logTo: 'stdout', quiet: log.tty })
  // set before the shutdown closes anything: a phase ending because its resource closed starts no next one
  let stopping = false
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stopping = true
    })
  }
  ctx.shutdown.installSignalHandlers()
  const { config } = ctx

  const applied = await migrate(ctx.dbh.db, migrationOptions(config))
  if (applied.length > 0)
    ctx.logger.info({ migrations: applied, backend: ctx.dbh.backend }, 'migrations applied')
  const where =
    ctx.dbh.backend === 'pglite'
      ? `PGlite in ${shown(path.join(config.dataDir, 'pg'))}${
          ctx.dbh.created === 'template'
            ? ' (new, from the template)'
            : ctx.dbh.created === 'initdb'
              ? ' (new, initdb)'
              : ''
        }`
      : 'Postgres (DATABASE_URL)'
  log.line('database', `${where}; ${applied.length} migration(s) applied`)

  const metrics = createServiceMetrics({
    db: ctx.dbh.db,
    confirmations: config.confirmations,
    rpcUrl: config.rpcUrl,
    redisUrl: config.redisUrl,
    queuePrefix: config.queuePrefix,
    tenantLabels: config.metricsTenantLabels,
  })
  ctx.shutdown.add('metrics', () => metrics.close())
  const url = await startApi(ctx, metrics)
  log.line('api', `${url} answers (OpenAPI: ${url}/docs)`)

  const { setupFromConfig, setupFromDevnet } = await import('./chain-setup.ts')
  const devnet = config.rpcUrl ? undefined : await startUpDevnet(ctx, log)
  const chain = devnet ? setupFromDevnet(devnet) : await setupFromConfig(config)
  const jobs = await buildJobs(
    ctx,
    chain,
    metrics,
    undefined,
    devnet?.resumed ? RESUMED_DEVNET_SKIPS : undefined,
  )
  if (devnet) await joinUpDevnet(ctx, log, devnet, jobs.jobs.client)

  let account: DemoAccount | undefined
  if (devnet) {
    // the chain head seen before the history: the demo wallets count from the first report on
    await jobs.jobs.follower.syncOnce()
    const { initialHolders } = await import('../devnet/index.ts')
    account = {
      key: DEMO_ACCOUNT_KEY,
      wallets: initialHolders(devnet.simulator.state().wallets, DEMO_WALLETS),
    }
  }
  if (!config.databaseUrl) {
    // commands that need the embedded database while this process holds it act through the API with it
    const operator = await ensureOperatorClient(ctx.dbh.db, {
      dataDir: config.dataDir,
      baseUrl: config.baseUrl,
      authUrl: config.authUrl,
    })
    ctx.logger.info({ client_id: operator.client_id }, 'operator client written')
  }
  const { file, demo, created } = await ensureDemoClient(ctx.dbh.db, {
    dataDir: config.dataDir,
    baseUrl: config.baseUrl,
    authUrl: config.authUrl,
    ...(account ? { account } : {}),
  })
  ctx.logger.info(
    { demo_client_file: file, client_id: demo.client_id, org_id: demo.org_id, created },
    'demo client credentials written',
  )
  log.line(
    'demo',
    `client credentials in ${shown(file)}${
      account ? `; account "${account.key}" holds ${account.wallets.length} devnet wallets` : ''
    }`,
  )

  await jobs.start()
  if (!devnet) {
    log.line('jobs', `follower, allowlist writer and day jobs running (${jobs.runner.kind} runner)`)
    process.stderr.write(demoBanner(url, file, demo))
    return
  }

  const live = devnet
  // a resumed chain builds only the history's days it had not simulated yet
  const remaining = Math.max(0, HISTORY_DAYS - (live.resumed?.nextDay ?? 0))
  if (remaining > 0) {
    const historyBar = createPhaseProgress(log, 'history', 'simulated days', HISTORY_DAYS)
    const started = performance.now()
    const history = live.buildHistory({
      days: remaining,
      onDay: (summary: DaySummary) => historyBar.update(summary.day + 1, `(${summary.date})`),
    })
    // the jobs ingest the history and compute its days meanwhile
    const days = await history
    if (stopping) return
    const last = days[days.length - 1]
    historyBar.done(
      `${days.length} simulated days${last ? ` up to ${last.date}` : ''} built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    )
  } else {
    log.line('history', `${live.resumed?.nextDay} simulated days kept from the saved chain`)
  }
  // the history's reports (live days add more while the follower catches up)
  const reports = live.simulator.state().reports.length
  live.goLive()
  await followCatchUp(ctx, log, chain.chainId, reports, () => stopping)
  if (stopping) return
  log.line('live', 'a new simulated day every 5 s; Ctrl-C stops')
  process.stderr.write(demoBanner(url, file, demo))
}
