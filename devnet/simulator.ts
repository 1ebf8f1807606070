import { renameSync, writeFileSync } from 'node:fs'
import {
  type Address,
  encodeFunctionData,
  type Hash,
  type Hex,
  type Log,
  type PublicClient,
  parseEventLogs,
  type TestClient,
} from 'viem'
import { allowlistAbi, PERMISSION, redeemManagerAbi, riverAbi } from '../chain/abi.ts'
import type { Logger } from '../common/logger.ts'
import { devnetOperatorsRegistryAbi, devnetOracleAbi, devnetRiverAbi } from './abi.ts'
import { derivedAddress } from './accounts.ts'
import { type BlockBuilder, createBlockBuilder, type MinedBlock, type TxRequest } from './blocks.ts'
import { type ConsensusFacts, createConsensusModel, DEPOSIT_SIZE, ETH } from './consensus.ts'
import type { DevnetDeployment } from './deploy.ts'
import { createRng, type Rng } from './rng.ts'
import { createTimeline, type Timeline } from './timeline.ts'

/** Per-wallet daily behaviour of the simulated users (probabilities are per wallet per day). */
export const DEFAULT_BEHAVIOR = {
  /** share of wallets that mint and redeem (allowlisted); the others only hold and transfer */
  minterShare: 0.8,
  /** share of the minters allowlisted before the first day; the others join over `joinHorizonDays` */
  initialMinterShare: 0.4,
  joinHorizonDays: 60,
  deposit: 0.03,
  /** share of deposits minted to another wallet (depositAndTransfer) */
  depositForOther: 0.1,
  transfer: 0.02,
  redeem: 0.01,
  /** share of redeem requests whose recipient is another allowlisted wallet */
  redeemForOther: 0.1,
  /** chance that a recipient claims its satisfied requests on a given day */
  claim: 0.6,
  /** chance that a minter's permissions are removed on a given day (it keeps its LsETH) */
  offboard: 0.0005,
  /** chance that a report uses the deposit buffer for redemptions */
  rebalanceDepositToRedeem: 0.3,
  /** deposit sizes, log-uniform, in ETH */
  depositEth: [0.05, 300] as const,
  initialDepositEth: [1, 500] as const,
}

/** A simulated wallet. */
export interface WalletState {
  index: number
  address: Address
  kind: 'minter' | 'holder'
  /** day its permissions are granted (-1: before the first day); holders are never allowlisted */
  joinDay: number
  /** Allowlist permissions as last set on chain */
  permissions: bigint
  denied: boolean
  /** LsETH shares, replayed from the Transfer logs of every mined block */
  shares: bigint
}

/** One oracle report as mined. */
export interface ReportRecord {
  day: number
  date: string
  blockNumber: bigint
  blockHash: Hash
  timestamp: bigint
  epoch: bigint
  rewards: bigint
  pulledELFees: bigint
  pulledExceedingEth: bigint
  /** fee shares minted to the collector (0 on a loss day) */
  feeShares: bigint
  globalFee: bigint
  /** U and S at the end of the report block */
  totalUnderlyingSupply: bigint
  totalSupply: bigint
  validatorsCount: number
  stoppedValidatorCount: number
  /** id of the withdrawal event the report created, if any */
  withdrawalEventId: number | undefined
  slashing: boolean
  rebalanceDepositToRedeemMode: boolean
}

export interface DaySummary {
  day: number
  date: string
  reportBlock: bigint
  transactions: number
}

export interface SimulatorCounts {
  transactions: number
  blocks: number
  deposits: number
  transfers: number
  redeemRequests: number
  claims: number
  allowlistChanges: number
}

export interface SimulatorState {
  /** days simulated so far (the next day to simulate) */
  day: number
  reports: ReportRecord[]
  wallets: WalletState[]
  /** redeem requests with a simulated recipient that are not fully claimed yet */
  openRedeemRequests: { id: number; recipient: Address; initiator: Address }[]
  counts: SimulatorCounts
  globalFee: bigint
  live: boolean
  /** error that stopped live mode, if any */
  error: Error | undefined
}

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
  /** JSON file rewritten after every report with the consensus facts (see README) */
  consensusFile?: string
  behavior?: Partial<typeof DEFAULT_BEHAVIOR>
  logger?: Logger
}

export interface LiveOptions {
  /** wall-clock milliseconds between simulated days; 0 = no new days, only mine others' transactions */
  dayIntervalMs?: number
  /** wall-clock milliseconds between checks for others' pending transactions (default 1000) */
  blockIntervalMs?: number
}

export interface Simulator {
  readonly timeline: Timeline
  readonly deployment: DevnetDeployment
  /** Simulates the next `n` days (each ends with its report block); `onDay` hears of each day mined. */
  runDays(n: number, onDay?: (summary: DaySummary) => void): Promise<DaySummary[]>
  /** Mines the pending transactions of others (e.g. the service's allowlist writer), if any. */
  minePending(): Promise<MinedBlock | undefined>
  /** Adds a day every `dayIntervalMs` and mines others' transactions every `blockIntervalMs`. */
  startLive(options?: LiveOptions): void
  /** Stops live mode (and a `runDays` in flight after its current day) and waits for the work in flight. */
  stop(): Promise<void>
  state(): SimulatorState
  /** Consensus facts of the latest report (network exit queue inputs), undefined before the first. */
  consensus(): ConsensusFacts | undefined
  /** Consensus facts of every report so far. */
  consensusHistory(): ConsensusFacts[]
}

const GAS = {
  deposit: 250_000n,
  transfer: 200_000n,
  requestRedeem: 500_000n,
  claimBase: 200_000n,
  claimPerRequest: 400_000n,
  allowlistBase: 80_000n,
  allowlistPerAccount: 40_000n,
  clDepositBase: 300_000n,
  clDepositPerValidator: 5_000n,
  exitsBase: 300_000n,
  exitsPerValidator: 5_000n,
  admin: 300_000n,
  report: 3_000_000n,
}
const ALLOWLIST_CHUNK = 200
const MAX_CL_DEPOSITS_PER_DAY = 5_000n
const WALLET_ETH = 100_000n * ETH
const MINTER_PERMISSIONS = PERMISSION.DEPOSIT | PERMISSION.REDEEM
const eventsAbi = [...riverAbi, ...redeemManagerAbi, ...allowlistAbi, ...devnetOperatorsRegistryAbi]

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
  const { contracts, roles } = deployment
  const behavior = { ...DEFAULT_BEHAVIOR, ...options.behavior }
  const timeline = createTimeline(options.startDate, options.reportSecondOfDay)
  const lossDay = options.lossDay === undefined ? 12 : options.lossDay
  const feeChange = options.feeChange === undefined ? { day: 20, fee: 1000 } : options.feeChange
  const denyDay = options.denyDay === undefined ? 10 : options.denyDay
  const logger = options.logger
  if (!Number.isInteger(options.walletCount) || options.walletCount < 10) {
    throw new Error('walletCount must be an integer >= 10')
  }
  if (lossDay !== null && lossDay < 1) throw new Error('lossDay must be >= 1 (validators activate at day 0)')

  const builder: BlockBuilder = await createBlockBuilder({ publicClient, testClient })
  const firstActivity = timeline.activityTimes(0)[0] as bigint
  if (builder.lastTimestamp() + 60n >= firstActivity) {
    throw new Error(
      `the chain (latest block at ${builder.lastTimestamp()}) is past the simulator's start (${firstActivity}); start anvil at timeline.genesisTimestamp`,
    )
  }
  await testClient.request({ method: 'anvil_autoImpersonateAccount', params: [true] } as never)

  const root = createRng(seed)
  const userRng = root.fork('users')
  const reportRng = root.fork('reports')
  const consensusModel = createConsensusModel({
    rng: root.fork('consensus'),
    operatorCount: deployment.operators.length,
  })

  const walletRng = root.fork('wallets')
  const wallets: WalletState[] = Array.from({ length: options.walletCount }, (_, index) => {
    const minter = walletRng.chance(behavior.minterShare)
    const initial = walletRng.chance(behavior.initialMinterShare)
    const joinDay = !minter || initial ? -1 : walletRng.int(behavior.joinHorizonDays)
    return {
      index,
      address: derivedAddress(seed, 'wallet', index),
      kind: minter ? 'minter' : 'holder',
      joinDay,
      permissions: 0n,
      denied: false,
      shares: 0n,
    }
  })
  const walletByAddress = new Map(wallets.map((w) => [w.address.toLowerCase(), w]))
  const openRequests = new Map<number, { id: number; recipient: Address; initiator: Address }>()
  const requestedExits = new Array<number>(deployment.operators.length).fill(0)
  const reports: ReportRecord[] = []
  const factsHistory: ConsensusFacts[] = []
  const counts: SimulatorCounts = {
    transactions: 0,
    blocks: 0,
    deposits: 0,
    transfers: 0,
    redeemRequests: 0,
    claims: 0,
    allowlistChanges: 0,
  }
  let globalFee = BigInt(deployment.initialFee)
  let nextDay = 0
  let setupDone = false
  let liveError: Error | undefined
  let queue: Promise<unknown> = Promise.resolve()
  let dayTimer: NodeJS.Timeout | undefined
  let blockTimer: NodeJS.Timeout | undefined
  let dayQueued = false
  /** set by stop(): a runDays in flight ends after its current day */
  let stopping = false
  let blockQueued = false

  const call = (
    from: Address,
    to: Address,
    data: Hex,
    gas: bigint,
    label: string,
    value?: bigint,
  ): TxRequest =>
    value === undefined ? { from, to, data, gas, label } : { from, to, data, gas, label, value }

  // ---------------------------------------------------------------- log replay

  const applyBlock = (block: MinedBlock, timestamp: bigint): void => {
    counts.blocks += 1
    counts.transactions += block.receipts.length
    const known = new Set<string>(Object.values(contracts).map((a) => a.toLowerCase()))
    const logs = block.logs.filter((log) => known.has(log.address.toLowerCase()))
    const parsed = parseEventLogs({ abi: eventsAbi, logs: logs as unknown as Log[] })
    for (const log of parsed) {
      const address = log.address.toLowerCase()
      switch (log.eventName) {
        case 'Transfer': {
          if (address !== contracts.river.toLowerCase()) break
          const from = walletByAddress.get(log.args.from.toLowerCase())
          const to = walletByAddress.get(log.args.to.toLowerCase())
          if (from) from.shares -= log.args.value
          if (to) to.shares += log.args.value
          break
        }
        case 'RequestedRedeem': {
          if (address !== contracts.redeemManager.toLowerCase()) break
          const recipient = walletByAddress.get(log.args.recipient.toLowerCase())
          if (!recipient) break
          const initiator = block.senders.get((log as { transactionHash: Hash }).transactionHash)
          openRequests.set(log.args.id, {
            id: log.args.id,
            recipient: recipient.address,
            initiator: initiator ?? recipient.address,
          })
          break
        }
        case 'SetAllowlistPermissions': {
          if (address !== contracts.allowlist.toLowerCase()) break
          log.args.accounts.forEach((account, i) => {
            const wallet = walletByAddress.get(account.toLowerCase())
            const value = log.args.permissions[i] ?? 0n
            if (!wallet) return
            if ((value & PERMISSION.DENY) === PERMISSION.DENY) {
              // setDenyPermissions stores exactly DENY
              wallet.denied = true
              wallet.permissions = PERMISSION.DENY
            } else if (wallet.denied) {
              // setAllowPermissions cannot touch a denied account: this is an undeny, which stores 0
              wallet.denied = false
              wallet.permissions = 0n
            } else {
              wallet.permissions = value
            }
          })
          break
        }
        case 'FundedValidators':
          if (address !== contracts.operatorsRegistry.toLowerCase()) break
          consensusModel.addDeposits(Number(log.args.index), Number(log.args.count), timestamp)
          break
        case 'RequestedValidatorExits':
          if (address !== contracts.operatorsRegistry.toLowerCase()) break
          requestedExits[Number(log.args.index)] = Number(log.args.count)
          break
        case 'UpdatedRequestedValidatorExitsUponStopped':
          if (address !== contracts.operatorsRegistry.toLowerCase()) break
          requestedExits[Number(log.args.index)] = Number(log.args.newRequestedExits)
          break
      }
    }
  }

  const mine = async (txs: TxRequest[], timestamp: bigint): Promise<MinedBlock[]> => {
    const blocks = await builder.mine(txs, timestamp)
    for (const block of blocks) applyBlock(block, block.timestamp)
    return blocks
  }

  // ---------------------------------------------------------------- helpers

  const randomEth = (rng: Rng, [min, max]: readonly [number, number]): bigint => {
    const eth = Math.exp(rng.between(Math.log(min), Math.log(max)))
    // micro-ETH precision plus random low digits, so the floor divisions see arbitrary integers
    return BigInt(Math.floor(eth * 1e6)) * 10n ** 12n + BigInt(rng.int(1_000_000_000))
  }
  const fraction = (rng: Rng, amount: bigint, whole: number, min: number, max: number): bigint => {
    if (rng.chance(whole)) return amount
    const share = BigInt(Math.round(rng.between(min, max) * 1e6))
    const part = (amount * share) / 1_000_000n
    return part === 0n ? amount : part
  }
  const canUse = (w: WalletState, mask: bigint) => !w.denied && (w.permissions & mask) === mask
  const pickOther = (
    rng: Rng,
    self: WalletState,
    filter: (w: WalletState) => boolean,
  ): WalletState | undefined => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const candidate = rng.pick(wallets)
      if (candidate !== self && !candidate.denied && filter(candidate)) return candidate
    }
    return undefined
  }
  const allowTxs = (accounts: Address[], permissions: bigint[], label: string): TxRequest[] => {
    const txs: TxRequest[] = []
    for (let i = 0; i < accounts.length; i += ALLOWLIST_CHUNK) {
      const chunk = accounts.slice(i, i + ALLOWLIST_CHUNK)
      txs.push(
        call(
          roles.simulatorAllower,
          contracts.allowlist,
          encodeFunctionData({
            abi: allowlistAbi,
            functionName: 'setAllowPermissions',
            args: [chunk, permissions.slice(i, i + ALLOWLIST_CHUNK)],
          }),
          GAS.allowlistBase + GAS.allowlistPerAccount * BigInt(chunk.length),
          label,
        ),
      )
    }
    counts.allowlistChanges += accounts.length
    return txs
  }
  const depositTx = (wallet: WalletState, amount: bigint, recipient?: WalletState): TxRequest => {
    counts.deposits += 1
    const data = recipient
      ? encodeFunctionData({
          abi: devnetRiverAbi,
          functionName: 'depositAndTransfer',
          args: [recipient.address],
        })
      : encodeFunctionData({ abi: devnetRiverAbi, functionName: 'deposit' })
    return call(
      wallet.address,
      contracts.river,
      data,
      GAS.deposit,
      `deposit by wallet ${wallet.index}`,
      amount,
    )
  }
  const clDepositTx = async (): Promise<TxRequest | undefined> => {
    const balance = await publicClient.readContract({
      address: contracts.river,
      abi: devnetRiverAbi,
      functionName: 'getBalanceToDeposit',
    })
    let count = balance / DEPOSIT_SIZE
    if (count > MAX_CL_DEPOSITS_PER_DAY) count = MAX_CL_DEPOSITS_PER_DAY
    if (count === 0n) return undefined
    return call(
      roles.keeper,
      contracts.river,
      encodeFunctionData({ abi: devnetRiverAbi, functionName: 'depositToConsensusLayer', args: [count] }),
      GAS.clDepositBase + GAS.clDepositPerValidator * count,
      `keeper deposits ${count} validators`,
    )
  }

  // ---------------------------------------------------------------- setup (before day 0)

  const setup = async (): Promise<void> => {
    // 12 s after the latest block at each step (a big batch may have been split over several blocks)
    const next = () => builder.lastTimestamp() + 12n
    await Promise.all(
      wallets.map((w) =>
        testClient.setBalance({ address: w.address, value: w.kind === 'minter' ? WALLET_ETH : 10n * ETH }),
      ),
    )
    const initial = wallets.filter((w) => w.kind === 'minter' && w.joinDay < 0)
    await mine(
      allowTxs(
        initial.map((w) => w.address),
        initial.map(() => MINTER_PERMISSIONS),
        'initial allowlisting',
      ),
      next(),
    )
    const rng = userRng.fork('setup')
    await mine(
      initial.map((w) => depositTx(w, randomEth(rng, behavior.initialDepositEth))),
      next(),
    )
    const clDeposit = await clDepositTx()
    if (clDeposit) await mine([clDeposit], next())
    setupDone = true
  }

  // ---------------------------------------------------------------- one day

  const runDay = async (): Promise<DaySummary> => {
    if (!setupDone) await setup()
    const day = nextDay
    const date = timeline.dateOf(day)
    const times = timeline.activityTimes(day)
    const rng = userRng.fork(`day-${day}`)
    const transactionsBefore = counts.transactions

    // first block: keeper, claims, onboarding, admin, then users; later blocks: users
    const txsA: TxRequest[] = []
    const [clDeposit, exitDemand, claims] = await Promise.all([
      clDepositTx(),
      publicClient.readContract({
        address: contracts.operatorsRegistry,
        abi: devnetOperatorsRegistryAbi,
        functionName: 'getCurrentValidatorExitsDemand',
      }),
      claimTxs(rng),
    ])
    if (clDeposit) txsA.push(clDeposit)
    if (exitDemand > 0n) {
      txsA.push(
        call(
          roles.keeper,
          contracts.operatorsRegistry,
          encodeFunctionData({
            abi: devnetOperatorsRegistryAbi,
            functionName: 'requestValidatorExits',
            args: [exitDemand],
          }),
          GAS.exitsBase + GAS.exitsPerValidator * exitDemand,
          `keeper requests ${exitDemand} exits`,
        ),
      )
    }
    txsA.push(...claims)
    const joining = wallets.filter((w) => w.kind === 'minter' && w.joinDay === day && !w.denied)
    if (joining.length > 0) {
      txsA.push(
        ...allowTxs(
          joining.map((w) => w.address),
          joining.map(() => MINTER_PERMISSIONS),
          'onboarding',
        ),
      )
    }
    const offboarded = wallets.filter(
      (w) => w.kind === 'minter' && canUse(w, MINTER_PERMISSIONS) && rng.chance(behavior.offboard),
    )
    if (offboarded.length > 0) {
      txsA.push(
        ...allowTxs(
          offboarded.map((w) => w.address),
          offboarded.map(() => 0n),
          'offboarding',
        ),
      )
    }
    let deniedToday: WalletState | undefined
    if (day === denyDay) {
      const candidates = wallets.filter((w) => w.kind === 'minter' && !w.denied && w.shares > 0n)
      const target = candidates.length > 0 ? rng.pick(candidates) : undefined
      deniedToday = target
      if (target) {
        txsA.push(
          call(
            roles.denier,
            contracts.allowlist,
            encodeFunctionData({
              abi: allowlistAbi,
              functionName: 'setDenyPermissions',
              args: [[target.address], [PERMISSION.DENY]],
            }),
            GAS.admin,
            `deny wallet ${target.index}`,
          ),
        )
      }
    }
    if (feeChange && day === feeChange.day) {
      txsA.push(
        call(
          roles.admin,
          contracts.river,
          encodeFunctionData({
            abi: devnetRiverAbi,
            functionName: 'setGlobalFee',
            args: [BigInt(feeChange.fee)],
          }),
          GAS.admin,
          `fee change to ${feeChange.fee} bps`,
        ),
      )
    }
    // wallets losing their permissions in this block act from the next day on
    const changing = new Set<WalletState>(offboarded)
    if (deniedToday) changing.add(deniedToday)
    txsA.push(...userTxs(rng, day, times.length, changing))
    await mine(txsA, times[0] as bigint)
    startOwedExits(day)
    for (const timestamp of times.slice(1)) {
      await mine(userTxs(rng, day, times.length, changing), timestamp)
    }

    // report block
    const report = await mineReport(day, date)
    return {
      day,
      date,
      reportBlock: report.blockNumber,
      transactions: counts.transactions - transactionsBefore,
    }
  }

  /** Voluntary exits the registry asked for that the model has not started yet (retried daily). */
  const startOwedExits = (day: number): void => {
    requestedExits.forEach((target, operator) => {
      const owed = target - consensusModel.exitingOrExitedCount(operator)
      if (owed > 0) consensusModel.startExits(operator, owed, day)
    })
  }

  const claimTxs = async (rng: Rng): Promise<TxRequest[]> => {
    const open = [...openRequests.values()]
    if (open.length === 0) return []
    const resolved = await publicClient.readContract({
      address: contracts.redeemManager,
      abi: redeemManagerAbi,
      functionName: 'resolveRedeemRequests',
      args: [open.map((r) => r.id)],
    })
    const byRecipient = new Map<Address, { ids: number[]; events: number[] }>()
    open.forEach((request, i) => {
      const eventId = resolved[i] ?? -1n
      if (eventId === -3n || eventId === -2n) {
        openRequests.delete(request.id)
        return
      }
      if (eventId < 0n) return
      const recipient = walletByAddress.get(request.recipient.toLowerCase())
      const initiator = walletByAddress.get(request.initiator.toLowerCase())
      if (!recipient || recipient.denied || initiator?.denied) return
      const entry = byRecipient.get(recipient.address) ?? { ids: [], events: [] }
      entry.ids.push(request.id)
      entry.events.push(Number(eventId))
      byRecipient.set(recipient.address, entry)
    })
    const txs: TxRequest[] = []
    for (const [recipient, { ids, events }] of byRecipient) {
      if (!rng.chance(behavior.claim)) continue
      counts.claims += ids.length
      txs.push(
        call(
          recipient,
          contracts.river,
          encodeFunctionData({
            abi: devnetRiverAbi,
            functionName: 'claimRedeemRequests',
            args: [ids, events],
          }),
          GAS.claimBase + GAS.claimPerRequest * BigInt(ids.length),
          `claim ${ids.join(',')} by ${recipient}`,
        ),
      )
    }
    return txs
  }

  const userTxs = (rng: Rng, day: number, blocksPerDay: number, skip: Set<WalletState>): TxRequest[] => {
    const txs: TxRequest[] = []
    const pDeposit = behavior.deposit / blocksPerDay
    const pTransfer = behavior.transfer / blocksPerDay
    const pRedeem = behavior.redeem / blocksPerDay
    for (const wallet of wallets) {
      if (wallet.denied || skip.has(wallet)) continue
      // a wallet allowlisted today makes its first deposit once the permission is mined
      const firstDeposit = wallet.joinDay === day && wallet.shares === 0n
      if (canUse(wallet, PERMISSION.DEPOSIT) && (firstDeposit || rng.chance(pDeposit))) {
        const recipient = rng.chance(behavior.depositForOther)
          ? pickOther(rng, wallet, (w) => !skip.has(w))
          : undefined
        txs.push(depositTx(wallet, randomEth(rng, behavior.depositEth), recipient))
      }
      if (wallet.shares === 0n) continue
      if (canUse(wallet, PERMISSION.REDEEM) && rng.chance(pRedeem)) {
        const other = rng.chance(behavior.redeemForOther)
          ? pickOther(rng, wallet, (w) => !skip.has(w) && canUse(w, PERMISSION.REDEEM))
          : undefined
        const amount = fraction(rng, wallet.shares, 0.25, 0.1, 0.9)
        counts.redeemRequests += 1
        txs.push(
          call(
            wallet.address,
            contracts.river,
            encodeFunctionData({
              abi: devnetRiverAbi,
              functionName: 'requestRedeem',
              args: [amount, (other ?? wallet).address],
            }),
            GAS.requestRedeem,
            `redeem request by wallet ${wallet.index}`,
          ),
        )
      } else if (rng.chance(pTransfer)) {
        const to = pickOther(rng, wallet, (w) => !skip.has(w))
        if (!to) continue
        counts.transfers += 1
        txs.push(
          call(
            wallet.address,
            contracts.river,
            encodeFunctionData({
              abi: devnetRiverAbi,
              functionName: 'transfer',
              args: [to.address, fraction(rng, wallet.shares, 0.2, 0.05, 0.8)],
            }),
            GAS.transfer,
            `transfer by wallet ${wallet.index}`,
          ),
        )
      }
    }
    return txs
  }

  const readBalance = (address: Address) => publicClient.getBalance({ address })

  const mineReport = async (day: number, date: string): Promise<ReportRecord> => {
    const timestamp = timeline.reportTime(day)
    const epoch = timeline.epochAt(timestamp)
    const slashing = day === lossDay
    const outcome = consensusModel.advance({ day, date, timestamp, epoch, slashing })
    factsHistory.push(outcome.facts)
    const rebalance = reportRng.chance(behavior.rebalanceDepositToRedeem)
    // consensus-layer withdrawals and block rewards are credited without transactions, as on mainnet
    const [withdrawBalance, feeBalance] = await Promise.all([
      readBalance(contracts.withdraw),
      readBalance(contracts.elFeeRecipient),
    ])
    await Promise.all([
      outcome.withdrawalCredit > 0n
        ? testClient.setBalance({
            address: contracts.withdraw,
            value: withdrawBalance + outcome.withdrawalCredit,
          })
        : undefined,
      outcome.elFees > 0n
        ? testClient.setBalance({ address: contracts.elFeeRecipient, value: feeBalance + outcome.elFees })
        : undefined,
    ])
    const reportArgs = {
      epoch,
      validatorsBalance: outcome.validatorsBalance,
      validatorsSkimmedBalance: outcome.validatorsSkimmedBalance,
      validatorsExitedBalance: outcome.validatorsExitedBalance,
      validatorsExitingBalance: outcome.validatorsExitingBalance,
      validatorsCount: outcome.validatorsCount,
      stoppedValidatorCountPerOperator: outcome.stoppedValidatorCountPerOperator,
      rebalanceDepositToRedeemMode: rebalance,
      slashingContainmentMode: slashing,
    }
    const [block] = await mine(
      [
        call(
          roles.oracleMember,
          contracts.oracle,
          encodeFunctionData({
            abi: devnetOracleAbi,
            functionName: 'reportConsensusLayerData',
            args: [reportArgs],
          }),
          GAS.report,
          `oracle report of ${date}`,
        ),
      ],
      timestamp,
    )
    if (!block) throw new Error(`report of ${date} mined no block`)
    const receipt = block.receipts[0]
    const parsed = parseEventLogs({
      abi: [...riverAbi, ...redeemManagerAbi],
      logs: (receipt?.logs ?? []) as unknown as Log[],
    })
    let trace:
      | { rewards: bigint; pulledELFees: bigint; pulledRedeemManagerExceedingEthBuffer: bigint }
      | undefined
    let feeShares = 0n
    let withdrawalEventId: number | undefined
    for (const log of parsed) {
      if (log.eventName === 'ProcessedConsensusLayerReport') trace = log.args.trace
      if (log.eventName === 'RewardsEarned') feeShares = log.args.newTotalSupply - log.args.oldTotalSupply
      if (log.eventName === 'ReportedWithdrawal') withdrawalEventId = log.args.id
    }
    if (!trace) throw new Error(`report of ${date} emitted no ProcessedConsensusLayerReport`)
    const atBlock = (functionName: 'totalUnderlyingSupply' | 'totalSupply' | 'getGlobalFee') =>
      publicClient.readContract({
        address: contracts.river,
        abi: riverAbi,
        functionName,
        blockNumber: block.number,
      })
    const [totalUnderlyingSupply, totalSupply, fee] = await Promise.all([
      atBlock('totalUnderlyingSupply'),
      atBlock('totalSupply'),
      atBlock('getGlobalFee'),
    ])
    globalFee = fee
    const record: ReportRecord = {
      day,
      date,
      blockNumber: block.number,
      blockHash: block.hash,
      timestamp,
      epoch,
      rewards: trace.rewards,
      pulledELFees: trace.pulledELFees,
      pulledExceedingEth: trace.pulledRedeemManagerExceedingEthBuffer,
      feeShares,
      globalFee,
      totalUnderlyingSupply,
      totalSupply,
      validatorsCount: outcome.validatorsCount,
      stoppedValidatorCount: outcome.stoppedValidatorCountPerOperator[0] ?? 0,
      withdrawalEventId,
      slashing,
      rebalanceDepositToRedeemMode: rebalance,
    }
    reports.push(record)
    nextDay = day + 1
    if (options.consensusFile) writeConsensusFile(options.consensusFile)
    logger?.debug(
      {
        day,
        date,
        block_number: Number(block.number),
        rewards_wei: trace.rewards.toString(),
        fee_shares: feeShares.toString(),
        validators: outcome.validatorsCount,
      },
      'devnet report mined',
    )
    return record
  }

  const writeConsensusFile = (file: string): void => {
    const days = factsHistory.map((f) => ({
      day: f.day,
      date: f.date,
      timestamp: Number(f.timestamp),
      epoch: Number(f.epoch),
      total_active_balance_wei: f.totalActiveBalance.toString(),
      active_validator_count: f.activeValidatorCount,
      exit_queue_wei: f.exitQueue.toString(),
      sweep_period_days: f.sweepPeriodDays,
      protocol_active_validators: f.protocolActiveValidators,
      protocol_exiting_balance_wei: f.protocolExitingBalance.toString(),
    }))
    const body = { latest: days[days.length - 1] ?? null, days }
    writeFileSync(`${file}.tmp`, `${JSON.stringify(body, null, 1)}\n`)
    renameSync(`${file}.tmp`, file)
  }

  // ---------------------------------------------------------------- serialisation and live mode

  const enqueue = <T>(work: () => Promise<T>): Promise<T> => {
    const result = queue.then(work)
    queue = result.catch(() => undefined)
    return result
  }

  const minePendingNow = async (): Promise<MinedBlock | undefined> => {
    if ((await builder.pendingCount()) === 0) return undefined
    const ceiling = (timeline.activityTimes(nextDay)[0] as bigint) - 1n
    let timestamp = builder.lastTimestamp() + 12n
    if (timestamp > ceiling) timestamp = builder.lastTimestamp() + 1n
    if (timestamp > ceiling) return undefined
    const [block] = await mine([], timestamp)
    return block
  }

  const stopTimers = () => {
    if (dayTimer) clearInterval(dayTimer)
    if (blockTimer) clearInterval(blockTimer)
    dayTimer = undefined
    blockTimer = undefined
  }

  const failLive = (error: unknown) => {
    liveError = error instanceof Error ? error : new Error(String(error))
    stopTimers()
    logger?.error({ err: liveError }, 'devnet simulator stopped after an error')
  }

  return {
    timeline,
    deployment,
    runDays(n, onDay) {
      return enqueue(async () => {
        const started = performance.now()
        const summaries: DaySummary[] = []
        for (let i = 0; i < n && !stopping; i++) {
          const summary = await runDay()
          summaries.push(summary)
          onDay?.(summary)
        }
        const last = summaries[summaries.length - 1]
        if (last) {
          logger?.info(
            {
              days: n,
              last_date: last.date,
              report_block: Number(last.reportBlock),
              transactions: counts.transactions,
              duration_ms: Math.round(performance.now() - started),
            },
            'devnet days simulated',
          )
        }
        return summaries
      })
    },
    minePending: () => enqueue(minePendingNow),
    startLive(live = {}) {
      if (dayTimer || blockTimer) return
      const dayIntervalMs = live.dayIntervalMs ?? 5_000
      blockTimer = setInterval(() => {
        if (blockQueued) return
        blockQueued = true
        enqueue(minePendingNow)
          .catch(failLive)
          .finally(() => {
            blockQueued = false
          })
      }, live.blockIntervalMs ?? 1_000)
      blockTimer.unref()
      if (dayIntervalMs > 0) {
        dayTimer = setInterval(() => {
          if (dayQueued) return
          dayQueued = true
          enqueue(async () => {
            const summary = await runDay()
            logger?.info(
              { day: summary.day, date: summary.date, report_block: Number(summary.reportBlock) },
              'devnet day simulated',
            )
          })
            .catch(failLive)
            .finally(() => {
              dayQueued = false
            })
        }, dayIntervalMs)
        dayTimer.unref()
      }
    },
    async stop() {
      stopping = true
      stopTimers()
      await queue
    },
    state: () => ({
      day: nextDay,
      reports: reports.map((r) => ({ ...r })),
      wallets: wallets.map((w) => ({ ...w })),
      openRedeemRequests: [...openRequests.values()].map((r) => ({ ...r })),
      counts: { ...counts },
      globalFee,
      live: dayTimer !== undefined || blockTimer !== undefined,
      error: liveError,
    }),
    consensus: () => factsHistory[factsHistory.length - 1],
    consensusHistory: () => [...factsHistory],
  }
}
