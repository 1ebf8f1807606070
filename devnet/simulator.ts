/**
 * The seeded protocol simulator over a deployed devnet (see README.md): `createSimulator` draws the wallets,
 * then each day mines the users' and keeper's transactions and the oracle report. The steps live in
 * `simulation/`: `state.ts` (records and shared context), `ledger.ts` (mining and log replay),
 * `transactions.ts` and `users.ts` (what is sent), `day.ts` (setup and one day), `report.ts` (the oracle
 * report and consensus facts file), `live.ts` (the serial queue and live mode).
 */
import type { PublicClient, TestClient } from 'viem'
import type { Logger } from '../common/logger.ts'
import { type BlockBuilder, createBlockBuilder } from './blocks.ts'
import { type ConsensusFacts, createConsensusModel } from './consensus.ts'
import type { DevnetDeployment } from './deployment.ts'
import { SIMULATOR_STATE_VERSION, type SimulatorSnapshot } from './persistence.ts'
import { createRng } from './rng.ts'
import { createSimulationRunner, type SimulationRunner } from './simulation/live.ts'
import { PRICE_WALK_START } from './simulation/prices.ts'
import {
  createWallets,
  DEFAULT_BEHAVIOR,
  type SimulationContext,
  type SimulatorState,
} from './simulation/state.ts'
import { createTimeline, type Timeline } from './timeline.ts'

export type { LiveOptions } from './simulation/live.ts'
export {
  type DaySummary,
  DEFAULT_BEHAVIOR,
  type ReportRecord,
  type SimulatorCounts,
  type SimulatorState,
  type WalletState,
} from './simulation/state.ts'

/** The scripted days of a history on the current (1.2.1) contracts. */
const CURRENT_EVENTS = {
  lossDay: 12,
  feeChange: { day: 20, fee: 1000 },
  denyDay: 10,
  undenyDay: null,
} as const

/**
 * The scripted days of a versioned history (upgrades on days 7, 20 and 35): a loss day under River 0.5.0
 * (reported with ConsensusLayerDataUpdate; the slashed validators are withdrawn once withdrawals exist), the
 * fee change under 1.0.0, a denial under 1.2.1 and its lifting ten days later.
 */
const VERSIONED_EVENTS = {
  lossDay: 12,
  feeChange: { day: 25, fee: 1000 },
  denyDay: 45,
  undenyDay: 55,
} as const

/** Options of createSimulator: the devnet, the seed, the calendar and the scripted days. */
export interface CreateSimulatorOptions {
  publicClient: PublicClient
  testClient: TestClient
  deployment: DevnetDeployment
  seed: number | string
  walletCount: number
  /** UTC date (YYYY-MM-DD) of the first report; the chain must start before it (see createTimeline). */
  startDate: string
  /** seconds after midnight UTC of each day's report block (default 12:00) */
  reportSecondOfDay?: number
  /** day index of the slashing (loss) day; null for none (default 12) */
  lossDay?: number | null
  /** day index and new fee (bps) of the fee change; null for none (default day 20, 1000 bps) */
  feeChange?: { day: number; fee: number } | null
  /** day index at which one holding minter is denied; null for none (default 10) */
  denyDay?: number | null
  /**
   * day index at which that wallet's denial is lifted (and it is allowlisted again); null for none (default:
   * none; a versioned history: day 55)
   */
  undenyDay?: number | null
  /**
   * day index of the first report preceded by ETH prices on the devnet's PriceFeeds (default 0: every report);
   * the reports before it find feeds without a round ("No data present")
   */
  pricesFromDay?: number
  /** called after a block that upgraded a proxy (the deployment's implementation records have its block) */
  onUpgrade?: () => void
  /** JSON file rewritten after every report with the consensus facts (see devnet/README.md) */
  consensusFile?: string
  behavior?: Partial<typeof DEFAULT_BEHAVIOR>
  logger?: Logger
  /**
   * a snapshot (`snapshot()`, devnet/persistence.ts) to continue from, on the chain it was taken on (restored
   * by anvil; `deployment` is the snapshot's): the next day is the snapshot's
   */
  resume?: SimulatorSnapshot
}

/** A seeded protocol simulator over a deployed devnet (see README.md). */
export interface Simulator extends Omit<SimulationRunner, 'live' | 'error'> {
  readonly timeline: Timeline
  readonly deployment: DevnetDeployment
  state(): SimulatorState
  /** Consensus facts of the latest report (network exit queue inputs), undefined before the first. */
  consensus(): ConsensusFacts | undefined
  /** Consensus facts of every report so far. */
  consensusHistory(): ConsensusFacts[]
  /**
   * The simulator's context as plain data with the chain's latest block, for `createSimulator({ resume })`;
   * taken when no work is in flight (after `stop()`).
   */
  snapshot(): Promise<SimulatorSnapshot>
}

/**
 * Creates the seeded protocol simulator over a deployed devnet (see README.md). Same seed, same options,
 * same chain start: the same blocks, transactions and logs.
 *
 * @example
 * const simulator = await createSimulator({ publicClient, testClient, deployment, seed: 1, walletCount: 200, startDate: '2026-04-01' })
 * await simulator.runDays(30)
 */
export async function createSimulator(options: CreateSimulatorOptions): Promise<Simulator> {
  const { publicClient, testClient, deployment, seed } = options
  const behavior = { ...DEFAULT_BEHAVIOR, ...options.behavior }
  const timeline = createTimeline(options.startDate, options.reportSecondOfDay)
  // the events of the history: a versioned one denies and lifts the denial after the 1.2.1 upgrade
  const preset = deployment.plan.kind === 'versioned' ? VERSIONED_EVENTS : CURRENT_EVENTS
  const lossDay = options.lossDay === undefined ? preset.lossDay : options.lossDay
  const feeChange = options.feeChange === undefined ? preset.feeChange : options.feeChange
  const denyDay = options.denyDay === undefined ? preset.denyDay : options.denyDay
  const undenyDay = options.undenyDay === undefined ? preset.undenyDay : options.undenyDay
  const logger = options.logger
  if (!Number.isInteger(options.walletCount) || options.walletCount < 10) {
    throw new Error('walletCount must be an integer >= 10')
  }
  if (lossDay !== null && lossDay < 1) throw new Error('lossDay must be >= 1 (validators activate at day 0)')

  const resume = options.resume
  const builder: BlockBuilder = await createBlockBuilder({ publicClient, testClient })
  const firstActivity = timeline.activityTimes(0)[0] as bigint
  if (!resume && builder.lastTimestamp() + 60n >= firstActivity) {
    throw new Error(
      `the chain (latest block at ${builder.lastTimestamp()}) is past the simulator's start (${firstActivity}); start anvil at timeline.genesisTimestamp`,
    )
  }
  await testClient.request({ method: 'anvil_autoImpersonateAccount', params: [true] } as never)

  // each generator derives from the seed and its label; a resumed one skips the numbers already drawn
  const forked = (label: string, draws = 0) => createRng(`${seed}/${label}`, draws)
  const userRng = forked('users', resume?.draws.users)
  const reportRng = forked('reports', resume?.draws.reports)
  const priceRng = forked('prices', resume?.draws.prices)
  const consensusRng = forked('consensus', resume?.draws.consensus)
  const pricesFromDay = options.pricesFromDay ?? 0
  if (!Number.isInteger(pricesFromDay) || pricesFromDay < 0)
    throw new Error('pricesFromDay must be an integer >= 0')
  const consensusModel = createConsensusModel({
    rng: consensusRng,
    operatorCount: deployment.operators.length,
    ...(resume ? { from: resume.consensus } : {}),
  })

  const wallets = resume
    ? resume.wallets.map((w) => ({ ...w }))
    : createWallets(seed, options.walletCount, behavior, createRng(seed).fork('wallets'))
  const ctx: SimulationContext = {
    publicClient,
    testClient,
    deployment,
    timeline,
    behavior,
    lossDay,
    feeChange,
    denyDay,
    undenyDay,
    deniedWallet: undefined,
    versions: { ...deployment.plan.initial },
    onUpgrade: options.onUpgrade,
    consensusFile: options.consensusFile,
    logger,
    builder,
    userRng,
    reportRng,
    priceRng,
    priceWalk: resume ? { ...resume.priceWalk } : PRICE_WALK_START,
    pricesFromDay,
    consensusModel,
    wallets,
    walletByAddress: new Map(wallets.map((w) => [w.address.toLowerCase(), w])),
    openRequests: new Map(),
    requestedExits: new Array<number>(deployment.operators.length).fill(0),
    fundedKeys: new Array<number>(deployment.operators.length).fill(0),
    addedKeys: new Array<number>(deployment.operators.length).fill(0),
    shanghaiDay: shanghaiDayOf(deployment),
    reports: [],
    factsHistory: [],
    counts: {
      transactions: 0,
      blocks: 0,
      deposits: 0,
      transfers: 0,
      redeemRequests: 0,
      claims: 0,
      allowlistChanges: 0,
    },
    globalFee: BigInt(deployment.initialFee),
    nextDay: 0,
    setupDone: false,
  }
  if (resume) restoreContext(ctx, resume)
  const runner = createSimulationRunner(ctx)

  return {
    timeline,
    deployment,
    runDays: runner.runDays,
    minePending: runner.minePending,
    startLive: runner.startLive,
    stop: runner.stop,
    setPace: runner.setPace,
    state: (): SimulatorState => ({
      day: ctx.nextDay,
      reports: ctx.reports.map((r) => ({ ...r })),
      wallets: wallets.map((w) => ({ ...w })),
      openRedeemRequests: [...ctx.openRequests.values()].map((r) => ({ ...r })),
      counts: { ...ctx.counts },
      globalFee: ctx.globalFee,
      live: runner.live(),
      error: runner.error(),
    }),
    consensus: () => ctx.factsHistory[ctx.factsHistory.length - 1],
    consensusHistory: () => [...ctx.factsHistory],
    async snapshot(): Promise<SimulatorSnapshot> {
      const head = await publicClient.getBlock({ blockTag: 'latest' })
      return {
        version: SIMULATOR_STATE_VERSION,
        seed,
        walletCount: options.walletCount,
        startDate: options.startDate,
        head: { number: head.number, hash: head.hash },
        deployment,
        nextDay: ctx.nextDay,
        setupDone: ctx.setupDone,
        deniedWallet: ctx.deniedWallet?.index,
        versions: { ...ctx.versions },
        draws: {
          users: userRng.draws(),
          reports: reportRng.draws(),
          prices: priceRng.draws(),
          consensus: consensusRng.draws(),
        },
        priceWalk: { ...ctx.priceWalk },
        consensus: consensusModel.snapshot(),
        wallets: wallets.map((w) => ({ ...w })),
        openRequests: [...ctx.openRequests.values()].map((r) => ({ ...r })),
        requestedExits: [...ctx.requestedExits],
        fundedKeys: [...ctx.fundedKeys],
        addedKeys: [...ctx.addedKeys],
        reports: ctx.reports.map((r) => ({ ...r })),
        factsHistory: [...ctx.factsHistory],
        counts: { ...ctx.counts },
        globalFee: ctx.globalFee,
      }
    },
  }
}

/** Sets a fresh context's records to a snapshot's (the generators and consensus model are restored apart). */
function restoreContext(ctx: SimulationContext, resume: SimulatorSnapshot): void {
  ctx.deniedWallet = resume.deniedWallet === undefined ? undefined : ctx.wallets[resume.deniedWallet]
  ctx.versions = { ...resume.versions }
  ctx.openRequests = new Map(resume.openRequests.map((r) => [r.id, { ...r }]))
  ctx.requestedExits = [...resume.requestedExits]
  ctx.fundedKeys = [...resume.fundedKeys]
  ctx.addedKeys = [...resume.addedKeys]
  ctx.reports = resume.reports.map((r) => ({ ...r }))
  ctx.factsHistory = [...resume.factsHistory]
  ctx.counts = { ...resume.counts }
  ctx.globalFee = resume.globalFee
  ctx.nextDay = resume.nextDay
  ctx.setupDone = resume.setupDone
}

/**
 * Shanghai: five days before River 1.0.0 (not before 0.5.0's day + 1), so legacy reports run while skims gather
 * in the Withdraw contract, booked at the first 1.x report; from the start when 1.0.0 is in the deploy block.
 */
function shanghaiDayOf(deployment: DevnetDeployment): number {
  const days = deployment.protocol.releaseDays
  if (days['1.0.0'] < 0) return -1
  return Math.max(days['0.5.0'] + 1, days['1.0.0'] - 5)
}
