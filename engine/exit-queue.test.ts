import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { InvalidInputError } from './errors.ts'
import {
  churnPolicyAt,
  computeExitQueue,
  createBalanceChurnPolicy,
  ELECTRA_CHURN,
  ELECTRA_FORK_EPOCH_MAINNET,
  GWEI_PER_ETH,
  PHASE0_CHURN,
} from './exit-queue.ts'

const ETH = GWEI_PER_ETH
const base = {
  epoch: 400_000,
  active_validators: 1_000_000,
  total_active_balance_gwei: 34_000_000n * ETH,
  queued_exit_balance_gwei: 0n,
  sweep_eligible_validators: 1_000_000,
}

describe('churn policies', () => {
  test('behavior: pre-Electra counts validators, Electra counts balance between 128 and 256 ETH', () => {
    expect(
      PHASE0_CHURN.exitChurnPerEpochGwei({ active_validators: 100, total_active_balance_gwei: 0n }),
    ).toBe(4n * 32n * ETH)
    expect(
      PHASE0_CHURN.exitChurnPerEpochGwei({ active_validators: 1_000_000, total_active_balance_gwei: 0n }),
    ).toBe(15n * 32n * ETH)
    const electra = (total: bigint) =>
      ELECTRA_CHURN.exitChurnPerEpochGwei({ active_validators: 0, total_active_balance_gwei: total })
    expect(electra(1_000_000n * ETH)).toBe(128n * ETH)
    expect(electra(10_000_000n * ETH)).toBe(152n * ETH) // 152.58 ETH rounded down to whole ETH
    expect(electra(34_000_000n * ETH)).toBe(256n * ETH)
    const uncapped = createBalanceChurnPolicy({
      name: 'next',
      minPerEpochGwei: 128n * ETH,
      maxPerEpochGwei: null,
    })
    expect(
      uncapped.exitChurnPerEpochGwei({ active_validators: 0, total_active_balance_gwei: 34_000_000n * ETH }),
    ).toBe(518n * ETH)
    expect(churnPolicyAt(ELECTRA_FORK_EPOCH_MAINNET - 1).name).toBe('phase0')
    expect(churnPolicyAt(ELECTRA_FORK_EPOCH_MAINNET).name).toBe('electra')
    expect(() => churnPolicyAt(5, [{ from_epoch: 10, policy: ELECTRA_CHURN }])).toThrow(InvalidInputError)
  })
})

describe('computeExitQueue', () => {
  test('behavior: exit wait, the 256-epoch delay (27.31 h) and half a sweep, in hours', () => {
    expect(computeExitQueue({ ...base, queued_exit_balance_gwei: 2560n * ETH })).toMatchObject({
      exit_time_hours: '1.60', // (2560 / 256 + 5) epochs x 6.4 min
      mandatory_exit_delay_hours: '27.31',
      sweep_time_hours: '104.17', // 1M / 16 slots x 12 s / 2
      churn_policy: 'electra',
      exit_epochs: 15,
    })
    expect(computeExitQueue(base).exit_time_hours).toBe('0.54') // 5 epochs = 0.5333 h, rounded up
    expect(computeExitQueue({ ...base, queued_exit_balance_gwei: 1n }).exit_epochs).toBe(6)
    expect(computeExitQueue({ ...base, epoch: 100, queued_exit_balance_gwei: 4800n * ETH }).exit_epochs).toBe(
      15,
    )
    expect(() => computeExitQueue({ ...base, sweep_eligible_validators: -1 })).toThrow(InvalidInputError)
    expect(() => computeExitQueue({ ...base, queued_exit_balance_gwei: -1n })).toThrow(InvalidInputError)
  })

  test.prop([fc.bigInt({ min: 0n, max: 10n ** 17n }), fc.bigInt({ min: 0n, max: 10n ** 17n })], {
    numRuns: runs(200),
  })('property: the exit wait never shrinks when more balance is queued', (a, b) => {
    const [low, high] = a < b ? [a, b] : [b, a]
    const x = computeExitQueue({ ...base, queued_exit_balance_gwei: low })
    const y = computeExitQueue({ ...base, queued_exit_balance_gwei: high })
    expect(x.exit_seconds <= y.exit_seconds).toBe(true)
    expect(Number(x.exit_time_hours) <= Number(y.exit_time_hours)).toBe(true)
  })
})
