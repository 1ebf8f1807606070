import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { InvalidInputError } from './errors.ts'
import { activeValidatorsPerOperator, splitOperatorFees, totalStoppedValidators } from './operator-fees.ts'

const arbOperators = fc.uniqueArray(
  fc.record({
    operator_id: fc.string({ minLength: 1, maxLength: 4 }),
    active_validators: fc.integer({ min: 0, max: 5000 }),
  }),
  { minLength: 1, maxLength: 12, selector: (operator) => operator.operator_id },
)

describe('splitOperatorFees', () => {
  test('behavior: proportional to active validators; the leftover wei go to the largest remainders', () => {
    const split = splitOperatorFees(10n, [
      { operator_id: 'b', active_validators: 2 },
      { operator_id: 'a', active_validators: 1 },
    ])
    expect(split).toEqual({
      operators: [
        { operator_id: 'a', active_validators: 1n, operator_fees_eth: 3n },
        { operator_id: 'b', active_validators: 2n, operator_fees_eth: 7n },
      ],
      unallocated_eth: 0n,
    })
    // equal remainders: ties go to the smaller operator_id
    const tie = splitOperatorFees(1n, [
      { operator_id: 'y', active_validators: 1 },
      { operator_id: 'x', active_validators: 1 },
    ])
    expect(tie.operators.map((o) => o.operator_fees_eth)).toEqual([1n, 0n])
  })

  test('behavior: no active validators leaves the amount unallocated; bad input throws', () => {
    expect(splitOperatorFees(5n, [{ operator_id: 'a', active_validators: 0 }]).unallocated_eth).toBe(5n)
    expect(splitOperatorFees(5n, []).unallocated_eth).toBe(5n)
    expect(() => splitOperatorFees(-1n, [])).toThrow(InvalidInputError)
    expect(() =>
      splitOperatorFees(1n, [
        { operator_id: 'a', active_validators: 1 },
        { operator_id: 'a', active_validators: 2 },
      ]),
    ).toThrow(InvalidInputError)
    expect(() => splitOperatorFees(1n, [{ operator_id: 'a', active_validators: -1 }])).toThrow(
      InvalidInputError,
    )
  })

  test.prop([fc.bigInt({ min: 0n, max: 10n ** 24n }), arbOperators], { numRuns: runs(300) })(
    'property: parts sum exactly to the amount, each is floor or floor + 1 of the exact share, any input order',
    (amount, operators) => {
      const split = splitOperatorFees(amount, operators)
      const total = operators.reduce((sum, o) => sum + BigInt(o.active_validators), 0n)
      const sum = split.operators.reduce((s, o) => s + o.operator_fees_eth, 0n)
      expect(sum + split.unallocated_eth).toBe(amount)
      if (total > 0n) {
        expect(split.unallocated_eth).toBe(0n)
        for (const o of split.operators) {
          const floor = (amount * o.active_validators) / total
          expect(o.operator_fees_eth === floor || o.operator_fees_eth === floor + 1n).toBe(true)
        }
      }
      expect(splitOperatorFees(amount, [...operators].reverse())).toEqual(split)
    },
  )
})

describe('activeValidatorsPerOperator', () => {
  test('behavior: funded minus the report stopped count at index i + 1; element 0 is the total', () => {
    expect(totalStoppedValidators([3, 2, 1])).toBe(3)
    expect(totalStoppedValidators([])).toBe(0)
    expect(
      activeValidatorsPerOperator(
        [
          { operator_id: '0', funded_validators: 10 },
          { operator_id: '1', funded_validators: 4 },
          { operator_id: '2', funded_validators: 7 },
        ],
        [3, 2, 1],
      ),
    ).toEqual([
      { operator_id: '0', active_validators: 8n },
      { operator_id: '1', active_validators: 3n },
      { operator_id: '2', active_validators: 7n },
    ])
    expect(() => activeValidatorsPerOperator([{ operator_id: '0', funded_validators: 1 }], [2, 2])).toThrow(
      InvalidInputError,
    )
  })
})
