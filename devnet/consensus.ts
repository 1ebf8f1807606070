import type { Rng } from './rng.ts'

/**
 * The simulated consensus layer: the protocol's validators (balances, activation, rewards, sweeps, exits,
 * one slashing incident) and synthetic network-wide facts (total active balance, active validator count,
 * ETH queued to exit) from which the exit and withdrawal delays are derived. Pure and deterministic given
 * its Rng; the simulator turns each day's outcome into an oracle report and ETH credits.
 */

export const ETH = 10n ** 18n
export const DEPOSIT_SIZE = 32n * ETH
const GWEI = 10n ** 9n

/** Tunables of the consensus-layer model. */
export const CONSENSUS_PARAMS = {
  /** consensus-layer APR range, drawn per day */
  clApr: [0.025, 0.031] as const,
  /** execution-layer fee APR range, drawn per day; occasionally multiplied by mevSpikeFactor */
  elApr: [0.003, 0.006] as const,
  mevSpikeChance: 0.03,
  mevSpikeFactor: 4,
  /** a deposited validator becomes active at the first report at least this long after its deposit */
  activationDelaySeconds: 12n * 3600n,
  /** share of the active validators slashed on the loss day, and the loss of each (at least) */
  slashedShare: 0.03,
  slashingPenalty: 1n * ETH,
  /** days between a slashing and the slashed validator's withdrawal (36 days on mainnet, compressed) */
  slashedWithdrawDays: 8,
  /** network-wide starting point and bounds of the random walks */
  networkActiveEth: 34_500_000,
  networkValidators: 1_050_000,
  exitQueueEth: [5_000, 250_000] as const,
  /** MIN_VALIDATOR_WITHDRAWABILITY_DELAY and MAX_SEED_LOOKAHEAD + 1, in epochs */
  withdrawabilityDelayEpochs: 256,
  exitEpochLookahead: 5,
} as const

export type ValidatorStatus = 'pending' | 'active' | 'exiting' | 'exited'

export interface ValidatorModel {
  index: number
  operator: number
  balance: bigint
  status: ValidatorStatus
  depositedAt: bigint
  /** report day at which an exiting validator's balance is withdrawn */
  withdrawDay: number
  slashed: boolean
}

/** Network-wide consensus facts at one report (what a Beacon API would give), plus the protocol's share. */
export interface ConsensusFacts {
  day: number
  date: string
  timestamp: bigint
  epoch: bigint
  /** sum of effective balances of all active validators on the network (wei) */
  totalActiveBalance: bigint
  activeValidatorCount: number
  /** ETH waiting in the network's exit queue (wei) */
  exitQueue: bigint
  /** days for the withdrawal sweep to visit every validator (validators / 16 per 12 s slot) */
  sweepPeriodDays: number
  protocolActiveValidators: number
  protocolExitingBalance: bigint
}

/** The validators' figures of an oracle report (the Oracle's report struct less epoch and modes). */
export interface ValidatorFigures {
  validatorsBalance: bigint
  validatorsSkimmedBalance: bigint
  validatorsExitedBalance: bigint
  validatorsExitingBalance: bigint
  validatorsCount: number
  /** [total, operator 0, operator 1, ...] (mainnet layout) */
  stoppedValidatorCountPerOperator: number[]
}

/** The consensus-layer part of an oracle report, with the day's ETH flows. */
export interface ConsensusDay extends ValidatorFigures {
  /** ETH that reached the withdrawal credentials today (skims + exits) */
  withdrawalCredit: bigint
  /** execution-layer fees earned today */
  elFees: bigint
  /** consensus-layer rewards (before penalties) earned today */
  clRewards: bigint
  slashedCount: number
  slashingLoss: bigint
  facts: ConsensusFacts
}

export interface ConsensusModel {
  /** Adds freshly deposited validators of one operator. */
  addDeposits(operator: number, count: number, timestamp: bigint): void
  /** Validators of `operator` already exiting or exited (voluntarily or slashed). */
  exitingOrExitedCount(operator: number): number
  /** Starts `count` voluntary exits of the operator's oldest active validators (day of the request). */
  startExits(operator: number, count: number, day: number): number
  /** Advances to the report of `day` (rewards, slashing, withdrawals, sweeps, activations, network). */
  advance(args: {
    day: number
    date: string
    timestamp: bigint
    epoch: bigint
    slashing: boolean
    /** false before withdrawals exist (River before 1.0.0): no sweeps and no withdrawals (default true) */
    withdrawals?: boolean
    /** sweeps of balances above 32 ETH (default: as `withdrawals`; true from Shanghai on the protocol's code) */
    skims?: boolean
  }): ConsensusDay
  validators(): readonly ValidatorModel[]
  facts(): ConsensusFacts | undefined
  /** The model's state as plain data (copies), for `createConsensusModel({ from })` (devnet/persistence.ts). */
  snapshot(): ConsensusSnapshot
}

/** A consensus model's state as plain data (what `snapshot()` gives and `from` restores). */
export interface ConsensusSnapshot {
  validators: ValidatorModel[]
  askedByOperator: number[]
  stoppedByOperator: number[]
  skimmedTotal: bigint
  exitedTotal: bigint
  networkActiveBalance: bigint
  networkValidators: number
  exitQueue: bigint
  lastFacts: ConsensusFacts | undefined
}

/** Exit churn per epoch since Electra: min(256, max(128, total active // 65536)) ETH, whole ETH. */
export function electraChurnPerEpoch(totalActiveBalance: bigint): bigint {
  const byBalance = totalActiveBalance / 65_536n / ETH
  const churn = byBalance < 128n ? 128n : byBalance > 256n ? 256n : byBalance
  return churn * ETH
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b

/**
 * Creates the consensus model; `from`: a snapshot of one to continue (its `rng` restored to the same draws).
 *
 * @example
 * const model = createConsensusModel({ rng: createRng(1).fork('consensus'), operatorCount: 5 })
 * model.addDeposits(0, 3, ts)
 */
export function createConsensusModel(deps: {
  rng: Rng
  operatorCount: number
  from?: ConsensusSnapshot
}): ConsensusModel {
  const { rng, operatorCount, from } = deps
  const p = CONSENSUS_PARAMS
  const validators: ValidatorModel[] = from ? from.validators.map((v) => ({ ...v })) : []
  const askedByOperator = from ? [...from.askedByOperator] : new Array<number>(operatorCount).fill(0)
  const stoppedByOperator = from ? [...from.stoppedByOperator] : new Array<number>(operatorCount).fill(0)
  let skimmedTotal = from?.skimmedTotal ?? 0n
  let exitedTotal = from?.exitedTotal ?? 0n
  let networkActiveBalance = from?.networkActiveBalance ?? BigInt(p.networkActiveEth) * ETH
  let networkValidators: number = from?.networkValidators ?? p.networkValidators
  let exitQueue = from?.exitQueue ?? 60_000n * ETH
  let lastFacts: ConsensusFacts | undefined = from?.lastFacts

  const sweepPeriodDays = () => Math.max(1, Math.round(((networkValidators / 16) * 12) / 86_400))
  const nextSweepDay = (validator: ValidatorModel, fromDay: number) => {
    const period = sweepPeriodDays()
    let day = fromDay
    while ((validator.index + day) % period !== 0) day += 1
    return day
  }
  const perDay = (balance: bigint, apr: number) => (balance * BigInt(Math.round(apr * 1e9))) / (365n * GWEI)

  return {
    addDeposits(operator, count, timestamp) {
      for (let i = 0; i < count; i++) {
        validators.push({
          index: validators.length,
          operator,
          balance: 0n,
          status: 'pending',
          depositedAt: timestamp,
          withdrawDay: -1,
          slashed: false,
        })
      }
    },

    exitingOrExitedCount: (operator) => askedByOperator[operator] ?? 0,

    startExits(operator, count, day) {
      const churn = electraChurnPerEpoch(networkActiveBalance)
      const exitEpochs = BigInt(p.exitEpochLookahead) + ceilDiv(exitQueue, churn)
      const seconds = (exitEpochs + BigInt(p.withdrawabilityDelayEpochs)) * 384n
      const readyDay = day + Number(ceilDiv(seconds, 86_400n))
      let started = 0
      for (const validator of validators) {
        if (started === count) break
        if (validator.operator !== operator || validator.status !== 'active') continue
        validator.status = 'exiting'
        validator.withdrawDay = nextSweepDay(validator, readyDay)
        started += 1
      }
      askedByOperator[operator] = (askedByOperator[operator] ?? 0) + started
      return started
    },

    advance({ day, date, timestamp, epoch, slashing, withdrawals = true, skims = withdrawals }) {
      // 1. rewards of the day for validators live since the previous report
      const clApr = rng.between(p.clApr[0], p.clApr[1])
      let elApr = rng.between(p.elApr[0], p.elApr[1])
      if (rng.chance(p.mevSpikeChance)) elApr *= p.mevSpikeFactor
      const reward = perDay(DEPOSIT_SIZE, clApr)
      let clRewards = 0n
      let activeCount = 0
      for (const validator of validators) {
        if (validator.status === 'active') activeCount += 1
        if ((validator.status === 'active' || validator.status === 'exiting') && !validator.slashed) {
          validator.balance += reward
          clRewards += reward
        }
      }
      const elFees = perDay(BigInt(activeCount) * DEPOSIT_SIZE, elApr)

      // 2. the slashing incident: enough validators lose enough for the day to be a net loss
      let slashedCount = 0
      let slashingLoss = 0n
      if (slashing && activeCount > 0) {
        const active = validators.filter((v) => v.status === 'active')
        slashedCount = Math.min(active.length, Math.max(1, Math.ceil(active.length * p.slashedShare)))
        let penalty: bigint = p.slashingPenalty
        const needed = clRewards + elFees + ETH / 100n
        if (penalty * BigInt(slashedCount) <= needed) penalty = needed / BigInt(slashedCount) + 1n
        for (let i = 0; i < slashedCount; i++) {
          const j = i + rng.int(active.length - i)
          const chosen = active[j] as ValidatorModel
          active[j] = active[i] as ValidatorModel
          chosen.balance -= penalty
          chosen.status = 'exiting'
          chosen.slashed = true
          chosen.withdrawDay = day + p.slashedWithdrawDays
          askedByOperator[chosen.operator] = (askedByOperator[chosen.operator] ?? 0) + 1
          slashingLoss += penalty
        }
      }

      // 3. withdrawals of exited validators, 4. sweeps of balances above 32 ETH
      let withdrawnToday = 0n
      let skimmedToday = 0n
      const period = sweepPeriodDays()
      for (const validator of withdrawals || skims ? validators : []) {
        if (withdrawals && validator.status === 'exiting' && validator.withdrawDay <= day) {
          withdrawnToday += validator.balance
          validator.balance = 0n
          validator.status = 'exited'
          stoppedByOperator[validator.operator] = (stoppedByOperator[validator.operator] ?? 0) + 1
        } else if (
          skims &&
          validator.status === 'active' &&
          validator.balance > DEPOSIT_SIZE &&
          (validator.index + day) % period === 0
        ) {
          skimmedToday += validator.balance - DEPOSIT_SIZE
          validator.balance = DEPOSIT_SIZE
        }
      }
      skimmedTotal += skimmedToday
      exitedTotal += withdrawnToday

      // 5. activations
      for (const validator of validators) {
        if (validator.status === 'pending' && validator.depositedAt + p.activationDelaySeconds <= timestamp) {
          validator.status = 'active'
          validator.balance = DEPOSIT_SIZE
        }
      }

      // 6. network random walks
      networkActiveBalance += BigInt(Math.round(rng.between(-6_000, 9_000))) * ETH
      networkValidators += Math.round(rng.between(-250, 350))
      const drift = BigInt(Math.round(rng.between(0.85, 1.15) * 1e6))
      exitQueue = (exitQueue * drift) / 1_000_000n
      const [low, high] = [BigInt(p.exitQueueEth[0]) * ETH, BigInt(p.exitQueueEth[1]) * ETH]
      exitQueue = exitQueue < low ? low : exitQueue > high ? high : exitQueue

      let validatorsBalance = 0n
      let exitingBalance = 0n
      let seen = 0
      let protocolActive = 0
      for (const validator of validators) {
        if (validator.status === 'pending') continue
        seen += 1
        if (validator.status === 'active') protocolActive += 1
        if (validator.status === 'exiting') exitingBalance += validator.balance
        validatorsBalance += validator.balance
      }
      const totalStopped = stoppedByOperator.reduce((a, b) => a + b, 0)
      lastFacts = {
        day,
        date,
        timestamp,
        epoch,
        totalActiveBalance: networkActiveBalance,
        activeValidatorCount: networkValidators,
        exitQueue,
        sweepPeriodDays: period,
        protocolActiveValidators: protocolActive,
        protocolExitingBalance: exitingBalance,
      }
      return {
        validatorsBalance,
        validatorsSkimmedBalance: skimmedTotal,
        validatorsExitedBalance: exitedTotal,
        validatorsExitingBalance: exitingBalance,
        validatorsCount: seen,
        stoppedValidatorCountPerOperator: [totalStopped, ...stoppedByOperator],
        withdrawalCredit: skimmedToday + withdrawnToday,
        elFees,
        clRewards,
        slashedCount,
        slashingLoss,
        facts: lastFacts,
      }
    },

    validators: () => validators,
    facts: () => lastFacts,
    snapshot: () => ({
      validators: validators.map((v) => ({ ...v })),
      askedByOperator: [...askedByOperator],
      stoppedByOperator: [...stoppedByOperator],
      skimmedTotal,
      exitedTotal,
      networkActiveBalance,
      networkValidators,
      exitQueue,
      lastFacts: lastFacts ? { ...lastFacts } : undefined,
    }),
  }
}
