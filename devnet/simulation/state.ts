/**
 * The simulator's state: its records (wallets, reports, counts), the context every step of the simulation
 * shares, and the wallets drawn from the seed.
 */
import type { Address, Hash, PublicClient, TestClient } from 'viem'
import type { Logger } from '../../common/logger.ts'
import { derivedAddress } from '../accounts.ts'
import type { BlockBuilder } from '../blocks.ts'
import type { ConsensusFacts, ConsensusModel } from '../consensus.ts'
import type { DevnetDeployment } from '../deployment.ts'
import type { Rng } from '../rng.ts'
import type { Timeline } from '../timeline.ts'
import type { ProtocolVersion, ProxiedContract } from '../versions.ts'
import type { DayPrices, PriceWalk } from './prices.ts'

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

/** The simulated users' behaviour: DEFAULT_BEHAVIOR with the caller's overrides. */
export type Behavior = typeof DEFAULT_BEHAVIOR

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
  /** River's version at the report (0.4.0 / 0.5.0: ConsensusLayerDataUpdate; 1.x: ProcessedConsensusLayerReport) */
  riverVersion: ProtocolVersion
  /** the ETH prices set on the PriceFeeds before the report (undefined on a day before `pricesFromDay`) */
  prices: DayPrices | undefined
}

/** One simulated day: its date, its report block and how many transactions it mined. */
export interface DaySummary {
  day: number
  date: string
  reportBlock: bigint
  transactions: number
}

/** What the simulator has mined so far, by kind. */
export interface SimulatorCounts {
  transactions: number
  blocks: number
  deposits: number
  transfers: number
  redeemRequests: number
  claims: number
  allowlistChanges: number
}

/** A redeem request with a simulated recipient that is not fully claimed yet. */
export interface OpenRedeemRequest {
  id: number
  recipient: Address
  initiator: Address
}

/** A snapshot of the simulator (copies: changing it changes nothing). */
export interface SimulatorState {
  /** days simulated so far (the next day to simulate) */
  day: number
  reports: ReportRecord[]
  wallets: WalletState[]
  /** redeem requests with a simulated recipient that are not fully claimed yet */
  openRedeemRequests: OpenRedeemRequest[]
  counts: SimulatorCounts
  globalFee: bigint
  live: boolean
  /** error that stopped live mode, if any */
  error: Error | undefined
}

/** Everything the steps of the simulation share: clients, settings, random sources and mutable records. */
export interface SimulationContext {
  publicClient: PublicClient
  testClient: TestClient
  deployment: DevnetDeployment
  timeline: Timeline
  behavior: Behavior
  /** day index of the slashing (loss) day, or null */
  lossDay: number | null
  feeChange: { day: number; fee: number } | null
  denyDay: number | null
  /** day index at which the wallet denied on `denyDay` is undenied and allowlisted again, or null */
  undenyDay: number | null
  /** the wallet denied on `denyDay` */
  deniedWallet: WalletState | undefined
  /** each proxy's current version, replayed from the proxies' Upgraded logs (null: no proxy yet) */
  versions: Record<ProxiedContract, ProtocolVersion | null>
  /** called after a block whose logs upgraded a proxy (devnet.json is rewritten with the blocks) */
  onUpgrade: (() => void) | undefined
  consensusFile: string | undefined
  logger: Logger | undefined
  builder: BlockBuilder
  userRng: Rng
  reportRng: Rng
  /** the ETH price walk's generator and state (simulation/prices.ts) */
  priceRng: Rng
  priceWalk: PriceWalk
  /** the first day whose prices are set on the feeds (earlier reports find no round) */
  pricesFromDay: number
  consensusModel: ConsensusModel
  wallets: WalletState[]
  /** wallets by lower-case address */
  walletByAddress: Map<string, WalletState>
  openRequests: Map<number, OpenRedeemRequest>
  /** per operator: the exits the registry asked for */
  requestedExits: number[]
  /** per operator: validator keys funded (replayed from FundedValidatorKey / FundedValidatorKeys logs) */
  fundedKeys: number[]
  /** per operator: validator keys the simulator added to the registry (the protocol's bytecode) */
  addedKeys: number[]
  /** the first day skims leave the validators (Shanghai; the protocol's bytecode: before River 1.0.0) */
  shanghaiDay: number
  reports: ReportRecord[]
  factsHistory: ConsensusFacts[]
  counts: SimulatorCounts
  globalFee: bigint
  /** the next day to simulate */
  nextDay: number
  setupDone: boolean
}

/**
 * Draws the simulated wallets from the seed: kind (minter or holder) and the day a minter joins.
 *
 * @example
 * const wallets = createWallets(1, 200, DEFAULT_BEHAVIOR, createRng(1).fork('wallets'))
 */
export function createWallets(
  seed: number | string,
  count: number,
  behavior: Behavior,
  walletRng: Rng,
): WalletState[] {
  return Array.from({ length: count }, (_, index) => {
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
}
