import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Address, Hex } from 'viem'
import type { Logger } from '../common/logger.ts'
import { startAnvil } from './anvil.ts'
import { createDevnetClients, DEVNET_ANVIL_ARGS } from './blocks.ts'
import {
  CONSENSUS_FILE,
  DEVNET_FILE,
  devnetFileContent,
  type ServiceContracts,
  serviceContracts,
  writeDevnetFile,
} from './devnet-file.ts'
import { assertResumedHead, keptAnvilArgs, keptSnapshot, openKeptState, saveKeptState } from './kept-state.ts'
import { replaceAnvilPid } from './persistence.ts'
import { deployProtocolDevnet } from './protocol-deploy.ts'
import { type RpcGate, startRpcGate } from './rpc-gate.ts'
import {
  type CreateSimulatorOptions,
  createSimulator,
  type DaySummary,
  type Simulator,
  type WalletState,
} from './simulator.ts'
import { createTimeline } from './timeline.ts'
import {
  type HistoryKind,
  type ImplementationRecord,
  type ProxiedContract,
  type UpgradeDays,
  versionPlan,
} from './versions.ts'

export type { ConsensusFacts } from './consensus.ts'
export type { DevnetContracts, DevnetDeployment } from './deployment.ts'
export {
  CONSENSUS_FILE,
  DEVNET_FILE,
  type DevnetFile,
  type DevnetPriceFeeds,
  type ImplementationEntry,
} from './devnet-file.ts'
export { DevnetStateError } from './persistence.ts'
export type { DaySummary, ReportRecord, Simulator, SimulatorState, WalletState } from './simulator.ts'
export type {
  HistoryKind,
  ImplementationRecord,
  ProtocolVersion,
  ProxiedContract,
  UpgradeDays,
} from './versions.ts'

export interface StartDevnetOptions {
  /** directory receiving devnet.json and devnet-consensus.json (created if missing) */
  dataDir: string
  /** simulator seed (default 1): same seed, same history */
  seed?: number | string
  /** days of history to build before returning (default 91: 2026-04-01 .. 2026-06-30) */
  days?: number
  /** simulated wallets (default 200) */
  walletCount?: number
  /** UTC date of the first report, YYYY-MM-DD (default 2026-04-01) */
  startDate?: string
  /** wall-clock ms between live days after the history (default 5000; 0 = no new days) */
  dayIntervalMs?: number
  /** wall-clock ms between checks for others' pending transactions (default 1000) */
  blockIntervalMs?: number
  /** RPC port (default 0: a free port) */
  port?: number
  chainId?: number
  logger?: Logger
  /**
   * Blocks whose state anvil keeps (`--prune-history`; default: every block's). Reads at an older block fail,
   * so a devnet that keeps few paces its days by its reader (`simulator.setPace`): `lsreport up` keeps 64 and
   * its follower stays within 32 blocks of the head. Bounds anvil's memory, which otherwise holds a copy of the
   * whole state for each of its latest 500 blocks.
   */
  stateHistoryBlocks?: number
  /**
   * `versioned` (default): the protocol's version history, starting on 0.4.0 and upgraded to 0.5.0, 1.0.0 and
   * 1.2.1 (docs/chain.md "Runtime"). `current`: every proxy on the 1.2.1 shapes from the start, no upgrades.
   */
  history?: HistoryKind
  /** upgrade days of a versioned history (default { v05Day: 7, v1Day: 20, v12Day: 35 }) */
  upgrades?: UpgradeDays
  /**
   * Directory keeping the chain and the simulator across restarts (devnet/persistence.ts; `lsreport up`:
   * `$DATA_DIR/devnet`): a saved pair there is resumed (same chain, contracts and head; the simulator's next
   * day), and `stop()` saves the pair again. A pair that cannot be resumed throws (remove the directory to start
   * a new chain). Unset: the chain lives in memory only (`lsreport devnet`, tests).
   */
  stateDir?: string
  /** further simulator options (loss day, fee change, deny and undeny days, report time, behaviour) */
  simulator?: Pick<
    CreateSimulatorOptions,
    'lossDay' | 'feeChange' | 'denyDay' | 'undenyDay' | 'reportSecondOfDay' | 'behavior' | 'pricesFromDay'
  >
}

export interface DevnetHandle {
  rpcUrl: string
  chainId: number
  /**
   * the five contracts the service reads, and the ETH price feeds it reads at each report (the full set is in
   * simulator.deployment.contracts)
   */
  contracts: ServiceContracts
  /** the service's allowlist writer (dev account #1, the AllowlistFirewall's executor) */
  allowerAddress: Address
  allowerPrivateKey: Hex
  /** the AllowlistFirewall: the Allowlist's allower; the writer sends its allowlisting here */
  firewall: Address
  /**
   * Per proxy, the implementations it points at over the history, oldest first (block null until mined): maps
   * an implementation address, e.g. an EIP-1967 slot's value at a block, to a version. Live: updated as
   * upgrades are mined.
   */
  implementations: Record<ProxiedContract, ImplementationRecord[]>
  deployBlock: bigint
  simulator: Simulator
  /** paths of the written devnet.json and consensus facts file */
  devnetFile: string
  consensusFile: string
  /**
   * With `stateDir`: the saved chain this devnet resumed (its head when saved and the simulator's next day),
   * undefined for a new chain.
   */
  resumed: { head: bigint; nextDay: number } | undefined
  /**
   * Stops the simulator, then the RPC gate and anvil; with `stateDir`, then saves the chain and the simulator
   * (anvil's dump on exit, then the simulator's snapshot).
   */
  stop(): Promise<void>
}

/**
 * The first `count` wallets allowlisted before the first day: they deposit at setup, so they hold LsETH
 * from the first report on (and mint, transfer and redeem over the history).
 *
 * @example
 * initialHolders(devnet.simulator.state().wallets, 3) // ['0xee60...', '0x1f6e...', '0x9538...']
 */
export function initialHolders(wallets: readonly WalletState[], count = 5): Address[] {
  return wallets
    .filter((w) => w.kind === 'minter' && w.joinDay < 0)
    .slice(0, count)
    .map((w) => w.address)
}

/** The devnet's anvil flags, with `--prune-history` when only the latest `stateHistoryBlocks` keep their state. */
function anvilArgs(stateHistoryBlocks: number | undefined): string[] {
  if (stateHistoryBlocks === undefined) return DEVNET_ANVIL_ARGS
  if (!Number.isInteger(stateHistoryBlocks) || stateHistoryBlocks < 1) {
    throw new Error(`stateHistoryBlocks must be a positive integer, not ${stateHistoryBlocks}`)
  }
  return [...DEVNET_ANVIL_ARGS, '--prune-history', String(stateHistoryBlocks)]
}

/** A devnet whose contracts are deployed, before its history: `buildHistory`, then `goLive`. */
export interface LaunchedDevnet extends DevnetHandle {
  /**
   * Simulates `days` days (default: the `days` option), calling `onDay` after each; ends early, after the
   * current day, when `stop()` is called.
   */
  buildHistory(options?: { days?: number; onDay?: (summary: DaySummary) => void }): Promise<DaySummary[]>
  /** Live mode: a new day every `dayIntervalMs`, others' transactions mined every `blockIntervalMs`. */
  goLive(): void
}

/**
 * Launches the embedded devnet without its history: spawns anvil (127.0.0.1, free port) at the timeline's
 * genesis, deploys the contracts, creates the simulator and writes `$dataDir/devnet.json`. The caller may
 * act on the empty chain (e.g. register wallets, so they count from the first report), then builds the
 * history and goes live.
 *
 * @example
 * const devnet = await launchDevnet({ dataDir: './data' })
 * await devnet.buildHistory({ onDay: (d) => console.log(d.date) })
 * devnet.goLive()
 */
export async function launchDevnet(options: StartDevnetOptions): Promise<LaunchedDevnet> {
  const seed = options.seed ?? 1
  const days = options.days ?? 91
  const walletCount = options.walletCount ?? 200
  const startDate = options.startDate ?? '2026-04-01'
  const dayIntervalMs = options.dayIntervalMs ?? 5_000
  const logger = options.logger
  const timeline = createTimeline(startDate, options.simulator?.reportSecondOfDay)
  mkdirSync(options.dataDir, { recursive: true })
  const devnetFile = path.join(options.dataDir, DEVNET_FILE)
  const consensusFile = path.join(options.dataDir, CONSENSUS_FILE)

  const started = performance.now()
  const kept =
    options.stateDir === undefined
      ? undefined
      : openKeptState(options.stateDir, { seed, walletCount, startDate })
  const resume = kept?.resume
  const anvil = await startAnvil({
    port: 0,
    ...(options.chainId === undefined ? {} : { chainId: options.chainId }),
    // a resumed chain keeps its genesis and its blocks
    ...(resume ? {} : { timestamp: timeline.genesisTimestamp }),
    args: [...anvilArgs(options.stateHistoryBlocks), ...keptAnvilArgs(kept)],
    // loading and dumping a long history's state take seconds, minutes on a busy machine
    ...(kept ? { stopGraceMs: 60_000, startTimeoutMs: 300_000 } : {}),
  })
  if (kept) replaceAnvilPid(kept.paths, anvil.pid)
  let simulator: Simulator | undefined
  let gate: RpcGate | undefined
  try {
    // everyone, the simulator too, talks to anvil through the gate: no read overlaps the mining of a block
    gate = await startRpcGate(anvil.rpcUrl, { port: options.port ?? 0 })
    const rpcUrl = gate.url
    const { publicClient, testClient } = createDevnetClients(rpcUrl)
    const history = options.history ?? 'versioned'
    if (kept?.resume) await assertResumedHead(publicClient, kept.resume.head, kept.paths)
    const deployment =
      resume?.deployment ??
      (await deployProtocolDevnet({
        publicClient,
        testClient,
        timestamp: timeline.genesisTimestamp + 12n,
        plan: versionPlan(history, options.upgrades),
        releaseDays: { ...options.upgrades },
      }))
    let writeFile = () => {}
    simulator = await createSimulator({
      publicClient,
      testClient,
      deployment,
      seed,
      walletCount,
      startDate,
      consensusFile,
      ...options.simulator,
      ...(logger ? { logger } : {}),
      ...(resume ? { resume } : {}),
      onUpgrade: () => writeFile(),
    })
    const file = devnetFileContent({
      rpcUrl,
      chainId: anvil.chainId,
      deployment,
      history,
      timeline,
      seed,
      walletCount,
      dayIntervalMs,
      holders: initialHolders(simulator.state().wallets),
    })
    writeFile = () => writeDevnetFile(devnetFile, file, deployment.implementations)
    writeFile()
    logger?.info(
      {
        rpc_url: rpcUrl,
        deploy_block: Number(deployment.deployBlock),
        river: deployment.contracts.river,
        devnet_file: devnetFile,
        duration_ms: Math.round(performance.now() - started),
      },
      resume ? 'devnet chain resumed' : 'devnet contracts deployed',
    )
    const running = simulator
    const gateInFront = gate
    return {
      rpcUrl,
      chainId: anvil.chainId,
      contracts: serviceContracts(deployment),
      allowerAddress: file.allower.address,
      allowerPrivateKey: file.allower.private_key,
      firewall: deployment.contracts.firewall,
      implementations: deployment.implementations,
      deployBlock: deployment.deployBlock,
      simulator: running,
      devnetFile,
      consensusFile,
      resumed: resume ? { head: resume.head.number, nextDay: resume.nextDay } : undefined,
      buildHistory: (history = {}) => running.runDays(history.days ?? days, history.onDay),
      goLive() {
        running.startLive({
          dayIntervalMs,
          ...(options.blockIntervalMs === undefined ? {} : { blockIntervalMs: options.blockIntervalMs }),
        })
      },
      async stop() {
        await running.stop()
        // the simulator's context and the head it belongs to, once no work is in flight
        const snapshot = kept ? await keptSnapshot(running, kept.paths, logger) : undefined
        await gateInFront.stop()
        await anvil.stop()
        if (kept && snapshot) saveKeptState(kept.paths, snapshot, anvil.exitedCleanly(), logger)
      },
    }
  } catch (error) {
    await simulator?.stop().catch(() => undefined)
    await gate?.stop()
    await anvil.stop()
    throw error
  }
}

/**
 * Starts the embedded devnet: `launchDevnet` (anvil, contracts, `$dataDir/devnet.json`), then builds `days`
 * of history with the simulator, then keeps adding a day every `dayIntervalMs` and mines others'
 * transactions (e.g. the service's allowlist writer) every `blockIntervalMs`.
 *
 * @example
 * const devnet = await startDevnet({ dataDir: './data', days: 30, walletCount: 200 })
 * // devnet.rpcUrl === 'http://127.0.0.1:40123'
 * await devnet.stop()
 */
export async function startDevnet(options: StartDevnetOptions): Promise<DevnetHandle> {
  const started = performance.now()
  const devnet = await launchDevnet(options)
  try {
    await devnet.buildHistory()
  } catch (error) {
    await devnet.stop()
    throw error
  }
  devnet.goLive()
  options.logger?.info(
    {
      rpc_url: devnet.rpcUrl,
      days: options.days ?? 91,
      wallet_count: options.walletCount ?? 200,
      devnet_file: devnet.devnetFile,
      duration_ms: Math.round(performance.now() - started),
    },
    'devnet started',
  )
  return devnet
}
