/**
 * The embedded devnet of `lsreport up` (no RPC_URL): started, or resumed from the chain kept in
 * `$DATA_DIR/devnet` (devnet/persistence.ts), and joined to the database before the jobs start: a database and
 * a devnet that are not one chain stop the start with what to do.
 */
import { existsSync, rmSync } from 'node:fs'
import path from 'node:path'
import { ConfigError } from '../common/errors.ts'
import { createRepos } from '../db/repos/index.ts'
import type { LaunchedDevnet } from '../devnet/index.ts'
import { followerPace } from '../jobs/follower/pace.ts'
import type { Context } from './context.ts'
import { compareStoreWithChain } from './devnet-resume.ts'
import { type StartLog, shown } from './start-log.ts'

/** Days of devnet history built at start (2026-04-01 .. 2026-06-30), then a new day every 5 s. */
export const HISTORY_DAYS = 91
/**
 * Blocks whose state the embedded devnet's anvil keeps (a copy of the whole state each: 500 blocks of the
 * protocol's contracts took 250 MB), the follower kept within half of them (bench/start.ts measures it).
 */
const DEVNET_STATE_BLOCKS = 64
/** The embedded devnet's chain id (anvil's default). */
const DEVNET_CHAIN_ID = 31337
/**
 * The doctor's checks a resumed devnet skips: they read state at River's start block, which a chain restored
 * from its saved state no longer keeps (the follower reads only blocks near the head).
 */
export const RESUMED_DEVNET_SKIPS = ['archive', 'start_blocks']

/** What the start reads of the devnet's blocks (the jobs' chain client). */
type BlockReader = { getBlock(args: { blockNumber: bigint }): Promise<{ hash: string }> }

/** Why a data directory's database and devnet cannot go on together, and what to do. */
function startAnew(ctx: Context, why: string): ConfigError {
  const dir = ctx.config.dataDir
  return new ConfigError(
    `${why}. Going on would mix two chains in one database. Start with a new data directory: move ${dir} aside ` +
      `(mv ${shown(dir)} ${shown(dir)}.old) or delete it, then start again (docs/operations.md "Restarting the embedded default")`,
  )
}

/**
 * Launches the embedded devnet kept in `$DATA_DIR/devnet` (devnet/persistence.ts): the saved chain when there
 * is one, else a new one. A database that holds chain data with no saved chain to resume (the last `up` was
 * killed before it could save, or ran before chains were kept) stops the start with what to do; a saved state
 * that cannot be resumed is replaced by a new chain when the database holds no chain data, and stops the start
 * otherwise.
 */
async function launchKeptDevnet(ctx: Context, log: StartLog): Promise<LaunchedDevnet> {
  const { launchDevnet, DevnetStateError } = await import('../devnet/index.ts')
  const { devnetStatePaths } = await import('../devnet/persistence.ts')
  const { anvilBinaryPath } = await import('../devnet/anvil.ts')
  // a production install (no anvil) is told what to set before anything about its database
  anvilBinaryPath()
  const paths = devnetStatePaths(path.join(ctx.config.dataDir, 'devnet'))
  const cursors = await createRepos(ctx.dbh.db).chain.cursors(DEVNET_CHAIN_ID)
  const read = cursors.reduce((max, c) => (BigInt(c.block_number) > max ? BigInt(c.block_number) : max), 0n)
  const stored = cursors.length > 0
  if (stored && !existsSync(paths.simulator)) {
    throw startAnew(
      ctx,
      `the database holds devnet chain ${DEVNET_CHAIN_ID} read up to block ${read}, but ${shown(paths.dir)} has no saved chain to resume (the last \`lsreport up\` was killed before it could save it, or ran before chains were kept)`,
    )
  }
  const launch = () =>
    launchDevnet({
      dataDir: ctx.config.dataDir,
      days: HISTORY_DAYS,
      stateHistoryBlocks: DEVNET_STATE_BLOCKS,
      stateDir: paths.dir,
      logger: ctx.logger.child({ component: 'devnet' }),
    })
  try {
    return await launch()
  } catch (error) {
    if (!(error instanceof DevnetStateError)) throw error
    if (stored) throw startAnew(ctx, error.message)
    log.line('devnet', `${error.message}; the database holds no chain data: a new chain replaces it`)
    rmSync(paths.dir, { recursive: true, force: true })
    return launch()
  }
}

/**
 * The devnet phase of `up`: launches the kept devnet (a new chain, or the saved one resumed), stopped (and
 * saved) at shutdown, and says which on stderr.
 *
 * @example
 * const devnet = config.rpcUrl ? undefined : await startUpDevnet(ctx, log)
 */
export async function startUpDevnet(ctx: Context, log: StartLog): Promise<LaunchedDevnet> {
  const devnet = await launchKeptDevnet(ctx, log)
  ctx.shutdown.add('devnet', () => devnet.stop())
  log.line(
    'devnet',
    devnet.resumed
      ? `anvil at ${devnet.rpcUrl}, chain resumed at block ${devnet.resumed.head} (day ${devnet.resumed.nextDay}; ${shown(path.join(ctx.config.dataDir, 'devnet'))})`
      : `anvil at ${devnet.rpcUrl}, contracts deployed (${shown(devnet.devnetFile)})`,
  )
  return devnet
}

/**
 * A resumed devnet and the database are one chain: the same blocks where the follower read. A database that
 * read past the saved chain (the last `up` was killed after its state was saved) is rolled back by the
 * follower as a reorg, said here; a database of another chain stops the start.
 */
async function assertSameChain(
  ctx: Context,
  log: StartLog,
  devnet: LaunchedDevnet,
  client: BlockReader,
): Promise<void> {
  const head = devnet.resumed?.head ?? 0n
  const found = await compareStoreWithChain(ctx.dbh.db, devnet.chainId, head, async (n) => {
    return (await client.getBlock({ blockNumber: n })).hash
  })
  if (found.kind === 'behind') {
    const text = `the database read up to block ${found.cursor}, the saved chain ends at block ${head} (the last \`lsreport up\` stopped without saving, e.g. killed): the follower rolls back what it read after, as a reorg, and those days are computed again`
    ctx.logger.warn(
      { cursor: found.cursor.toString(), head: head.toString() },
      'devnet chain behind the database',
    )
    log.line('devnet', text)
  } else if (found.kind === 'different') {
    await devnet.stop()
    throw startAnew(
      ctx,
      `the database read devnet chain ${devnet.chainId} up to block ${found.cursor}, and its blocks are not those of the saved chain in ${shown(path.join(ctx.config.dataDir, 'devnet'))}`,
    )
  }
}

/**
 * Joins the embedded devnet to the database once the jobs are built (`client`: the jobs' chain client): a
 * resumed chain must be the one the database read (else the start stops), then the simulator waits for the
 * follower, every block it has still to read keeping its state on the devnet.
 *
 * @example
 * await joinUpDevnet(ctx, log, devnet, jobs.jobs.client)
 */
export async function joinUpDevnet(
  ctx: Context,
  log: StartLog,
  devnet: LaunchedDevnet,
  client: BlockReader,
): Promise<void> {
  if (devnet.resumed) await assertSameChain(ctx, log, devnet, client)
  devnet.simulator.setPace(followerPace(ctx.dbh.db, devnet.chainId, { maxLead: DEVNET_STATE_BLOCKS / 2 }))
}
