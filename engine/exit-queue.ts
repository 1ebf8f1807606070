import { ROUND_UP, toDec } from './decimal.ts'
import { InvalidInputError } from './errors.ts'
import { ceilDiv } from './units.ts'

/**
 * The validator exit queue (estimates from consensus-layer constants, PROTOCOL.md): how long an exit waits
 * for churn, the mandatory withdrawability delay and the withdrawal sweep. Churn rules change with forks, so
 * the churn function is a swappable policy chosen by epoch.
 */

/** Seconds per slot. */
export const SECONDS_PER_SLOT = 12
/** Slots per epoch. */
export const SLOTS_PER_EPOCH = 32
/** Seconds per epoch (6.4 minutes). */
export const SECONDS_PER_EPOCH = SECONDS_PER_SLOT * SLOTS_PER_EPOCH
/** MAX_SEED_LOOKAHEAD + 1: an exit epoch is at least current + 5. */
export const EXIT_LOOKAHEAD_EPOCHS = 5
/** MIN_VALIDATOR_WITHDRAWABILITY_DELAY in epochs (27.31 hours). */
export const MIN_VALIDATOR_WITHDRAWABILITY_DELAY_EPOCHS = 256
/** Withdrawals per block (MAX_WITHDRAWALS_PER_PAYLOAD). */
export const MAX_WITHDRAWALS_PER_PAYLOAD = 16
/** Gwei per ETH. */
export const GWEI_PER_ETH = 1_000_000_000n
/** CHURN_LIMIT_QUOTIENT. */
export const CHURN_LIMIT_QUOTIENT = 65_536n
/** Electra's first epoch on mainnet. */
export const ELECTRA_FORK_EPOCH_MAINNET = 364_032

/** The beacon state figures a churn policy needs. */
export interface ChurnInput {
  /** Active validators. */
  active_validators: number
  /** Total active (effective) balance, Gwei. */
  total_active_balance_gwei: bigint
}

/** A fork's exit churn: how much balance (Gwei) may exit per epoch. */
export interface ChurnPolicy {
  name: string
  exitChurnPerEpochGwei(input: ChurnInput): bigint
}

/**
 * Pre-Electra churn: max(4, active validators // 65536) validators per epoch, each counted as 32 ETH.
 *
 * @example
 * PHASE0_CHURN.exitChurnPerEpochGwei({ active_validators: 1_000_000, total_active_balance_gwei: 0n }) // 15 x 32 ETH in Gwei
 */
export const PHASE0_CHURN: ChurnPolicy = {
  name: 'phase0',
  exitChurnPerEpochGwei(input) {
    // rounding: floor (integer division as in the spec)
    const validators = BigInt(Math.max(4, Math.floor(input.active_validators / 65_536)))
    return validators * 32n * GWEI_PER_ETH
  },
}

/**
 * A balance-based churn policy (Electra and later): min(max, max(min, total active balance // 65536)),
 * rounded down to whole ETH; `maxPerEpochGwei: null` lifts the cap (a planned later fork).
 *
 * @example
 * createBalanceChurnPolicy({ name: 'uncapped', minPerEpochGwei: 128n * GWEI_PER_ETH, maxPerEpochGwei: null })
 */
export function createBalanceChurnPolicy(options: {
  name: string
  minPerEpochGwei: bigint
  maxPerEpochGwei: bigint | null
}): ChurnPolicy {
  return {
    name: options.name,
    exitChurnPerEpochGwei(input) {
      const quotient = input.total_active_balance_gwei / CHURN_LIMIT_QUOTIENT
      const balanceChurn = quotient > options.minPerEpochGwei ? quotient : options.minPerEpochGwei
      // rounding: down to whole ETH (EFFECTIVE_BALANCE_INCREMENT)
      const whole = balanceChurn - (balanceChurn % GWEI_PER_ETH)
      return options.maxPerEpochGwei !== null && whole > options.maxPerEpochGwei
        ? options.maxPerEpochGwei
        : whole
    },
  }
}

/**
 * Electra churn: min(256 ETH, max(128 ETH, total active balance // 65536)), whole ETH.
 *
 * @example
 * ELECTRA_CHURN.exitChurnPerEpochGwei({ active_validators: 0, total_active_balance_gwei: 34_000_000n * GWEI_PER_ETH }) // 256 ETH
 */
export const ELECTRA_CHURN: ChurnPolicy = createBalanceChurnPolicy({
  name: 'electra',
  minPerEpochGwei: 128n * GWEI_PER_ETH,
  maxPerEpochGwei: 256n * GWEI_PER_ETH,
})

/** A fork schedule: policies by first epoch, ascending. */
export type ChurnSchedule = readonly { from_epoch: number; policy: ChurnPolicy }[]

/** Mainnet's churn schedule (add a row when a fork changes the rule). */
export const MAINNET_CHURN_SCHEDULE: ChurnSchedule = [
  { from_epoch: 0, policy: PHASE0_CHURN },
  { from_epoch: ELECTRA_FORK_EPOCH_MAINNET, policy: ELECTRA_CHURN },
]

/**
 * The churn policy in force at `epoch`.
 *
 * @example
 * churnPolicyAt(400_000).name // 'electra'
 */
export function churnPolicyAt(epoch: number, schedule: ChurnSchedule = MAINNET_CHURN_SCHEDULE): ChurnPolicy {
  let found: ChurnPolicy | undefined
  for (const row of schedule) if (row.from_epoch <= epoch) found = row.policy
  if (!found) throw new InvalidInputError('no churn policy for that epoch', { details: { epoch } })
  return found
}

/** Inputs of the validator exit queue estimate (from a Beacon API, or the devnet simulator). */
export interface ExitQueueInput extends ChurnInput {
  /** Current epoch (selects the churn policy). */
  epoch: number
  /** Balance already queued to exit ahead of a new exit, Gwei. */
  queued_exit_balance_gwei: bigint
  /** Validators the withdrawal sweep visits (withdrawal credentials set). */
  sweep_eligible_validators: number
  /** Optional fork schedule (defaults to mainnet's). */
  churn_schedule?: ChurnSchedule
}

/** The interface's Validator exit queue info, plus the numbers behind it. */
export interface ExitQueueInfo {
  /** (ceil(queued / churn) + 5) epochs, in hours (2 dp, ROUND_UP). */
  exit_time_hours: string
  /** 256 epochs in hours (2 dp, ROUND_UP): '27.31'. */
  mandatory_exit_delay_hours: string
  /** Half a sweep cycle, (eligible / 16) slots / 2, in hours (2 dp, ROUND_UP). */
  sweep_time_hours: string
  churn_policy: string
  churn_per_epoch_gwei: bigint
  exit_epochs: number
  /** The same durations in seconds (for projections). */
  exit_seconds: number
  mandatory_exit_delay_seconds: number
  sweep_seconds: number
}

function hours(seconds: number): string {
  // rounding: ROUND_UP at 2 decimals (an estimate of a wait should not understate it)
  return toDec(seconds).div(3600).toDecimalPlaces(2, ROUND_UP).toFixed(2)
}

/**
 * Estimates the validator exit queue: exit wait (churn), mandatory withdrawability delay and half a sweep.
 *
 * @example
 * computeExitQueue({ epoch: 400_000, active_validators: 1_000_000, total_active_balance_gwei: 34_000_000n * GWEI_PER_ETH,
 *   queued_exit_balance_gwei: 2560n * GWEI_PER_ETH, sweep_eligible_validators: 1_000_000 })
 * // { exit_time_hours: '1.60', mandatory_exit_delay_hours: '27.31', sweep_time_hours: '104.17', ... }
 */
export function computeExitQueue(input: ExitQueueInput): ExitQueueInfo {
  for (const [field, value] of [
    ['epoch', input.epoch],
    ['active_validators', input.active_validators],
    ['sweep_eligible_validators', input.sweep_eligible_validators],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new InvalidInputError(`${field} must be a non-negative integer`, { details: { field, value } })
    }
  }
  if (input.queued_exit_balance_gwei < 0n || input.total_active_balance_gwei < 0n) {
    throw new InvalidInputError('balances must not be negative', { details: {} })
  }
  const policy = churnPolicyAt(input.epoch, input.churn_schedule)
  const churn = policy.exitChurnPerEpochGwei(input)
  if (churn <= 0n)
    throw new InvalidInputError('churn per epoch must be positive', { details: { policy: policy.name } })
  // rounding: ceil (a partly used epoch of churn still delays the exit by that epoch)
  const exitEpochs = Number(ceilDiv(input.queued_exit_balance_gwei, churn)) + EXIT_LOOKAHEAD_EPOCHS
  const exitSeconds = exitEpochs * SECONDS_PER_EPOCH
  const delaySeconds = MIN_VALIDATOR_WITHDRAWABILITY_DELAY_EPOCHS * SECONDS_PER_EPOCH
  // half a sweep cycle: (eligible / 16) slots / 2; rounding: ceil to whole seconds
  const sweepSeconds = Math.ceil(
    (input.sweep_eligible_validators * SECONDS_PER_SLOT) / MAX_WITHDRAWALS_PER_PAYLOAD / 2,
  )
  return {
    exit_time_hours: hours(exitSeconds),
    mandatory_exit_delay_hours: hours(delaySeconds),
    sweep_time_hours: hours(sweepSeconds),
    churn_policy: policy.name,
    churn_per_epoch_gwei: churn,
    exit_epochs: exitEpochs,
    exit_seconds: exitSeconds,
    mandatory_exit_delay_seconds: delaySeconds,
    sweep_seconds: sweepSeconds,
  }
}
