import type { ChainContracts } from '../chain/addresses.ts'
import { type ConsensusOrigin, createConsensusSource } from '../chain/beacon.ts'
import { type ChainClient, createChainClient, createWriteClient } from '../chain/client.ts'
import { AllowlistWriteRefusedError } from '../chain/errors.ts'
import { createLogFetcher } from '../chain/log-fetcher.ts'
import type { Logger } from '../common/logger.ts'
import type { Db } from '../db/index.ts'
import { createAllowlistWriter } from './allowlist-writer.ts'
import { createConsensusJob } from './consensus.ts'
import { createDayJobs, DAY_JOBS, inlineDayConcurrency } from './days/index.ts'
import { createExportJobs, EXPORT_JOBS } from './exports/index.ts'
import { createFollower } from './follower/index.ts'
import { type JobRunner, type Processor, UnrecoverableError } from './runner.ts'
import { createWebhookJobs, WEBHOOK_JOBS, type WebhookOptions } from './webhooks/index.ts'

/** Where the chain is and what to read on it (mainnet/hoodi from chain/addresses, devnet from its deploy). */
export interface ChainSetup {
  chainId: number
  rpcUrl: string
  contracts: ChainContracts
  /** Key of an Allowlist allower; without it the allowlist job is not registered. */
  allowerPrivateKey: `0x${string}` | undefined
  /**
   * Where the consensus figures of the validator exit queue come from (BEACON_URL, or a devnet's facts file);
   * without it the consensus job is not registered and the API's exit queue answers 503 IR5031.
   */
  consensus?: ConsensusOrigin | undefined
}

/** What `createJobs` needs: the database, a logger, the chain and the day and webhook settings. */
export interface JobsDeps {
  db: Db
  logger: Logger
  chain: ChainSetup
  confirmations: number
  /** Wallets per day shard (default 5,000). */
  shardWallets?: number
  /** Webhook delivery settings (default: DEFAULT_WEBHOOK_OPTIONS, public addresses only). */
  webhooks?: WebhookOptions
  /** The key webhook secrets are sealed under (SIGNING_KEY_SECRET); without it deliveries error, saying so. */
  webhookSealingKey?: () => Promise<Buffer>
}

/** Job names and how often the periodic ones run. */
export const JOBS = {
  sync: { name: 'sync', everyMs: 2_000 },
  allowlist: { name: 'allowlist', everyMs: 2_000 },
  days: { name: DAY_JOBS.schedule, everyMs: 2_000 },
  webhooks: { name: WEBHOOK_JOBS.dispatch, everyMs: 1_000 },
  /** Hands queued exports to the runner and deletes expired files (jobs/exports). */
  exports: { name: EXPORT_JOBS.dispatch, everyMs: 1_000 },
  /** One slot: the sources cache their reads (Beacon API 10 min), so most passes store nothing. */
  consensus: { name: 'consensus', everyMs: 12_000 },
} as const

/**
 * The processors (plain functions: they run under BullMQ and the inline runner alike) and the pieces
 * they are made of: the chain follower, the allowlist writer and the day pipeline. Call `useRunner` with
 * the runner built from `processors` before starting it (the day jobs enqueue their own follow-ups).
 */
export function createJobs(deps: JobsDeps) {
  const client: ChainClient = createChainClient({ rpcUrl: deps.chain.rpcUrl, chainId: deps.chain.chainId })
  const logger = deps.logger.child({ component: 'jobs' })
  const follower = createFollower({
    db: deps.db,
    client,
    fetcher: createLogFetcher({ client, logger }),
    chainId: deps.chain.chainId,
    contracts: deps.chain.contracts,
    confirmations: deps.confirmations,
    logger,
  })
  const writer = deps.chain.allowerPrivateKey
    ? createAllowlistWriter({
        db: deps.db,
        client,
        wallet: createWriteClient({
          rpcUrl: deps.chain.rpcUrl,
          privateKey: deps.chain.allowerPrivateKey,
          chainId: deps.chain.chainId,
        }),
        allowlist: deps.chain.contracts.allowlist,
        logger,
      })
    : undefined
  let runner: JobRunner | undefined
  const boundRunner = () => {
    if (!runner) throw new Error('createJobs: useRunner() was not called before the jobs ran')
    return runner
  }
  const webhooks = createWebhookJobs({
    db: deps.db,
    logger,
    options: deps.webhooks,
    sealingKey: deps.webhookSealingKey,
    runner: boundRunner,
  })
  const processors: Record<string, Processor> = {
    ...webhooks.processors,
    ...createExportJobs({ db: deps.db, logger, runner: boundRunner }),
    ...createDayJobs({
      db: deps.db,
      chainId: deps.chain.chainId,
      logger,
      burnAddresses: [deps.chain.contracts.river, deps.chain.contracts.redeemManager],
      ...(deps.shardWallets ? { shardWallets: deps.shardWallets } : {}),
      runner: boundRunner,
    }),
    [JOBS.sync.name]: async (job) => {
      const r = await follower.syncOnce(job.progress)
      return { head: r.head.toString(), reports: r.reports }
    },
  }
  const consensus = deps.chain.consensus
    ? createConsensusJob({
        db: deps.db,
        chainId: deps.chain.chainId,
        source: createConsensusSource(deps.chain.consensus),
        logger,
      })
    : undefined
  if (consensus) processors[JOBS.consensus.name] = () => consensus.runOnce()
  if (writer) {
    processors[JOBS.allowlist.name] = async () => {
      try {
        const r = await writer.runOnce()
        return { sent: r.sent.length, failed: r.failed.length, retrying: r.retrying.length }
      } catch (err) {
        // a key that may not write is not retried: the pass fails with the message naming the addresses
        if (err instanceof AllowlistWriteRefusedError) throw new UnrecoverableError(err.message)
        throw err
      }
    }
  }
  return {
    client,
    follower,
    writer,
    /** The consensus job (absent without a consensus origin in the chain setup). */
    consensus,
    processors,
    /** How many jobs of a name the inline runner runs at once (the day's shard jobs). */
    inlineConcurrency: inlineDayConcurrency(deps.db),
    /** Lets the webhook attempts in flight finish, leaving queued ones pending (call after the runner stopped). */
    drainWebhooks: webhooks.drain,
    /** Binds the runner the day jobs enqueue their flows on. */
    useRunner(r: JobRunner) {
      runner = r
    },
  }
}
