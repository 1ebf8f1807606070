/**
 * The data of the API benchmark (bench/api.ts) and of the reporting-cache tests: a synthetic chain history of `holders` LsETH holders over
 * `reports` reports, written straight into the tables the follower fills (./synthetic-history.ts, the day
 * benchmark's generator: 1 % of holders registered in 5 orgs, accounts of 100 wallets), then every day
 * computed by the real day pipeline (createDayJobs on the inline runner). What the API then reads is
 * exactly what production stores. `syntheticDayRunner` is the one builder of that pipeline's runner for the
 * benchmarks and tests (bench/day-worker.ts times its processors through it).
 */
import { createClient } from '../../cli/admin.ts'
import { createLogger, type Logger } from '../../common/logger.ts'
import type { Db } from '../../db/index.ts'
import { createDayJobs, DAY_JOBS, inlineDayConcurrency } from '../../jobs/days/index.ts'
import { createInlineRunner, type JobRunner, type Processor } from '../../jobs/runner.ts'
import { BENCH_CHAIN_ID, BURN_ADDRESSES, reportInfo, writeHistory } from './synthetic-history.ts'

export interface RewardsDay {
  /** The date of the last computed report (YYYY-MM-DD). */
  date: string
  /** Wallet records of that day. */
  wallets: number
  /** The org whose client reads (its registered wallets are shown whole). */
  orgId: string
  clientId: string
  clientSecret: string
  /** Addresses with a record on `date`: half the org's registered wallets, half other holders, interleaved. */
  addresses: string[]
  /** The org's registered wallets among `addresses`. */
  ownAddresses: string[]
  /** A registered account of the org and its key. */
  accountKey: string
  seconds: { history: number; days: number }
}

/** How `syntheticDayRunner` builds its runner: its processors (wrapped), and how to run them. */
export interface DayRunnerOptions {
  logger?: Logger
  /** Wraps each processor (a benchmark times them by name). */
  wrap?: (name: string, processor: Processor) => Processor
  /** Builds the runner from the processors (default: the inline runner). */
  makeRunner?: (processors: Record<string, Processor>, logger: Logger) => JobRunner
  /** Wallets per shard (DAY_SHARD_WALLETS; default the service's). */
  shardWallets?: number
}

/**
 * The day pipeline of the synthetic chain (createDayJobs, its processors enqueueing on the runner they run
 * on): on the inline runner unless `makeRunner` builds another (bench/day-worker.ts's BullMQ variant).
 *
 * @example
 * const runner = syntheticDayRunner(db)
 * await runner.start()
 * await runner.enqueue(DAY_JOBS.schedule, {}, { jobId: 'days' })
 */
export function syntheticDayRunner(db: Db, options: DayRunnerOptions = {}): JobRunner {
  const logger = options.logger ?? createLogger({ level: 'silent' })
  let runner: JobRunner | undefined
  const processors = createDayJobs({
    db,
    chainId: BENCH_CHAIN_ID,
    logger,
    burnAddresses: BURN_ADDRESSES,
    runner: () => runner as JobRunner,
    ...(options.shardWallets ? { shardWallets: options.shardWallets } : {}),
  })
  const wrap = options.wrap
  const wrapped = wrap
    ? Object.fromEntries(Object.entries(processors).map(([name, p]) => [name, wrap(name, p)]))
    : processors
  runner = options.makeRunner
    ? options.makeRunner(wrapped, logger)
    : createInlineRunner(wrapped, logger, inlineDayConcurrency(db))
  return runner
}

/** Writes the history and computes its days; returns what the benchmark requests. */
export async function seedRewardsDay(
  db: Db,
  options: { holders: number; reports?: number; sample?: number },
): Promise<RewardsDay> {
  const reports = options.reports ?? 2
  const started = performance.now()
  await writeHistory(db, { holders: options.holders, reports }, reports)
  await db.raw('analyze')
  const historySeconds = (performance.now() - started) / 1000

  const runner = syntheticDayRunner(db)
  await runner.start()
  const daysStarted = performance.now()
  await runner.enqueue(DAY_JOBS.schedule, {}, { jobId: 'bench-api-days' })
  await runner.idle(30 * 60_000)
  const failed = await runner.failed()
  await runner.close()
  const notComputed = await db('days').whereNot({ status: 'computed' }).count<{ count: string }[]>()
  if (failed.length > 0 || Number(notComputed[0]?.count) > 0) {
    throw new Error(`the day pipeline failed: ${JSON.stringify(failed).slice(0, 2000)}`)
  }
  const daysSeconds = (performance.now() - daysStarted) / 1000
  await db.raw('analyze')

  const last = reportInfo(reports)
  const orgId = 'org_bench_0'
  const sample = options.sample ?? 1000
  // half registered wallets of the org (shown whole), half other holders (shown without the org's terms)
  const own: { address: string }[] = await db('wallet_records')
    .select('address')
    .where({ report_epoch: last.epoch, org_id: orgId })
    .orderByRaw('md5(address)')
    .limit(Math.floor(sample / 2))
  const others: { address: string }[] = await db('wallet_records')
    .select('address')
    .where({ report_epoch: last.epoch })
    .whereNull('org_id')
    .orderByRaw('md5(address)')
    .limit(sample - own.length)
  const addresses = own.flatMap((r, i) => [r.address, ...(others[i] ? [others[i].address] : [])])
  addresses.push(...others.slice(own.length).map((r) => r.address))
  const [{ count }] = (await db('wallet_records').where({ report_epoch: last.epoch }).count()) as [
    { count: string },
  ]
  const account = (await db('accounts').where({ org_id: orgId }).orderBy('key').first('key')) as {
    key: string
  }
  const client = await createClient(db, {
    orgId,
    scopes: 'read:eth-rewards read:platform',
  })
  return {
    date: last.date,
    wallets: Number(count),
    orgId,
    clientId: client.client_id,
    clientSecret: client.client_secret,
    addresses,
    ownAddresses: own.map((r) => r.address),
    accountKey: account.key,
    seconds: { history: historySeconds, days: daysSeconds },
  }
}
