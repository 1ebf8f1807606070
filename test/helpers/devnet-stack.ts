import { type ChainClient, createChainClient } from '../../chain/client.ts'
import { setupFromDevnet } from '../../cli/chain-setup.ts'
import { createLogger } from '../../common/logger.ts'
import type { StartDevnetOptions } from '../../devnet/index.ts'
import { createJobs } from '../../jobs/index.ts'
import { createInlineRunner, type JobRunner } from '../../jobs/runner.ts'
import { startTestApi, type TestApi } from './api.ts'
import { startTestDevnet, type TestDevnet } from './devnet.ts'

/** A devnet, the real API over a fresh Postgres database, and the jobs on an inline runner wired to both. */
export interface DevnetStack {
  devnet: TestDevnet
  api: TestApi
  runner: JobRunner
  /** A read client over the devnet's RPC (receipts, contract reads). */
  chain: ChainClient
  /** Closes the runner, then the API (dropping its database), then the devnet. */
  close(): Promise<void>
}

/**
 * Starts a devnet (`startTestDevnet(name, devnet)`), the API on Postgres and the jobs (confirmations 0) on an
 * inline runner that runs each of `periodic` every 200 ms. Call it in `beforeAll`, `await stack?.close()` in
 * `afterAll`; what started before a failure is closed again.
 *
 * @example
 * stack = await startDevnetStack('allowlist', {
 *   devnet: { days: 3, walletCount: 10, dayIntervalMs: 0, blockIntervalMs: 100 },
 *   periodic: ['sync', 'allowlist'],
 * })
 */
export async function startDevnetStack(
  name: string,
  options: { devnet: Omit<StartDevnetOptions, 'dataDir'>; periodic: readonly string[] },
): Promise<DevnetStack> {
  const silent = createLogger({ level: 'silent' })
  const devnet = await startTestDevnet(name, options.devnet)
  let api: TestApi | undefined
  let runner: JobRunner | undefined
  const close = async () => {
    await runner?.close()
    await api?.close()
    await devnet.stop()
  }
  try {
    api = await startTestApi('postgres')
    const jobs = createJobs({
      db: api.dbh.db,
      logger: silent,
      chain: setupFromDevnet(devnet),
      confirmations: 0,
    })
    runner = createInlineRunner(jobs.processors, silent)
    jobs.useRunner(runner)
    await runner.start()
    for (const job of options.periodic) await runner.every(job, 200)
  } catch (error) {
    await close()
    throw error
  }
  const chain = createChainClient({ rpcUrl: devnet.rpcUrl, chainId: devnet.chainId })
  return { devnet, api, runner, chain, close }
}
