import { describe, expect, test } from 'vitest'
import { createConsensusModel, DEPOSIT_SIZE, ETH, electraChurnPerEpoch } from './consensus.ts'
import { createRng } from './rng.ts'
import { createTimeline } from './timeline.ts'

describe('electraChurnPerEpoch', () => {
  test('behavior: min(256, max(128, total // 65536)) whole ETH', () => {
    expect(electraChurnPerEpoch(34_500_000n * ETH)).toBe(256n * ETH)
    expect(electraChurnPerEpoch(12_000_000n * ETH)).toBe(183n * ETH)
    expect(electraChurnPerEpoch(5_000_000n * ETH)).toBe(128n * ETH)
  })
})

describe('createConsensusModel', () => {
  const timeline = createTimeline('2026-04-01')
  const advance = (model: ReturnType<typeof createConsensusModel>, day: number, slashing = false) =>
    model.advance({
      day,
      date: timeline.dateOf(day),
      timestamp: timeline.reportTime(day),
      epoch: timeline.epochAt(timeline.reportTime(day)),
      slashing,
    })

  test('behavior: balances only move between validators, skims and exits, apart from rewards and penalties', () => {
    const model = createConsensusModel({ rng: createRng(5), operatorCount: 3 })
    model.addDeposits(0, 40, timeline.genesisTimestamp)
    model.addDeposits(1, 30, timeline.genesisTimestamp)
    let previous = advance(model, 0)
    expect(previous.validatorsCount).toBe(70)
    expect(previous.validatorsBalance).toBe(70n * DEPOSIT_SIZE)
    model.startExits(1, 5, 0)
    for (let day = 1; day < 30; day++) {
      const current = advance(model, day, day === 10)
      const before =
        previous.validatorsBalance + previous.validatorsSkimmedBalance + previous.validatorsExitedBalance
      const after =
        current.validatorsBalance + current.validatorsSkimmedBalance + current.validatorsExitedBalance
      expect(after - before).toBe(current.clRewards - current.slashingLoss)
      if (day === 10) {
        expect(current.slashedCount).toBeGreaterThan(0)
        expect(current.clRewards + current.elFees).toBeLessThan(current.slashingLoss)
      }
      previous = current
    }
    expect(previous.validatorsSkimmedBalance).toBeGreaterThan(0n)
    expect(previous.stoppedValidatorCountPerOperator[0]).toBe(
      previous.stoppedValidatorCountPerOperator.slice(1).reduce((a, b) => a + b, 0),
    )
    expect((previous.stoppedValidatorCountPerOperator[2] ?? 0) >= 5).toBe(true)
  })
})
