import { InvalidInputError } from './errors.ts'

/**
 * Splits an amount of operator fees between node operators in proportion to their active validators,
 * by the largest-remainder rule, so the parts sum exactly to the amount and each operator gets either
 * floor(amount x v_i / V) or one wei more.
 */

/** One operator's active validators at a report. */
export interface OperatorValidators {
  /** Stable id of the operator (e.g. its OperatorsRegistry index as a string). */
  operator_id: string
  active_validators: number | bigint
}

/** One operator's part of the operator fees. */
export interface OperatorFeeShare {
  operator_id: string
  active_validators: bigint
  operator_fees_eth: bigint
}

/** The split of an amount between operators. */
export interface OperatorFeeSplit {
  /** One entry per operator, sorted by operator_id. */
  operators: OperatorFeeShare[]
  /** The amount that could not be attributed: all of it when no operator has an active validator, else 0. */
  unallocated_eth: bigint
}

function count(value: number | bigint, field: string): bigint {
  const n = typeof value === 'bigint' ? value : Number.isSafeInteger(value) ? BigInt(value) : -1n
  if (n < 0n) throw new InvalidInputError(`${field} must be a non-negative integer`, { details: { value } })
  return n
}

/**
 * Splits `amountEth` (wei, >= 0) between operators in proportion to active validators.
 * Rounding: each operator first gets floor(amount x v_i / V); the remaining wei (fewer than the number of
 * operators) go one each to the largest remainders, ties broken by operator_id ascending. The result does not
 * depend on the order of `operators`.
 *
 * @example
 * splitOperatorFees(10n, [{ operator_id: 'a', active_validators: 1 }, { operator_id: 'b', active_validators: 2 }])
 * // { operators: [{ operator_id: 'a', ..., operator_fees_eth: 3n }, { operator_id: 'b', ..., operator_fees_eth: 7n }],
 * //   unallocated_eth: 0n }
 */
export function splitOperatorFees(
  amountEth: bigint,
  operators: readonly OperatorValidators[],
): OperatorFeeSplit {
  if (amountEth < 0n) throw new InvalidInputError('operator fees must not be negative', { details: {} })
  const seen = new Set<string>()
  const rows = operators
    .map((operator) => {
      if (seen.has(operator.operator_id)) {
        throw new InvalidInputError('duplicate operator_id', {
          details: { operator_id: operator.operator_id },
        })
      }
      seen.add(operator.operator_id)
      return {
        operator_id: operator.operator_id,
        active: count(operator.active_validators, 'active_validators'),
      }
    })
    .sort((a, b) => (a.operator_id < b.operator_id ? -1 : a.operator_id > b.operator_id ? 1 : 0))
  const total = rows.reduce((sum, row) => sum + row.active, 0n)
  if (total === 0n) {
    return {
      operators: rows.map((row) => ({
        operator_id: row.operator_id,
        active_validators: 0n,
        operator_fees_eth: 0n,
      })),
      unallocated_eth: amountEth,
    }
  }
  // rounding: floor per operator, then largest remainder
  const parts = rows.map((row) => ({
    ...row,
    fees: (amountEth * row.active) / total,
    remainder: (amountEth * row.active) % total,
  }))
  let left = amountEth - parts.reduce((sum, part) => sum + part.fees, 0n)
  const byRemainder = [...parts].sort((a, b) =>
    a.remainder !== b.remainder
      ? a.remainder > b.remainder
        ? -1
        : 1
      : a.operator_id < b.operator_id
        ? -1
        : 1,
  )
  for (const part of byRemainder) {
    if (left === 0n) break
    part.fees += 1n
    left -= 1n
  }
  return {
    operators: parts.map((part) => ({
      operator_id: part.operator_id,
      active_validators: part.active,
      operator_fees_eth: part.fees,
    })),
    unallocated_eth: 0n,
  }
}

/**
 * Total stopped validators of a report: element 0 of the report's `stoppedValidatorCountPerOperator`
 * (the contract's convention: [total, operator 0, operator 1, ...]); 0 for an empty array.
 *
 * @example
 * totalStoppedValidators([5, 2, 3]) // 5
 */
export function totalStoppedValidators(stoppedValidatorCountPerOperator: readonly number[]): number {
  return stoppedValidatorCountPerOperator[0] ?? 0
}

/**
 * Active validators per operator: funded validators of operator i minus its stopped count, which the
 * report carries at index i + 1 of `stoppedValidatorCountPerOperator` (missing entries count as 0).
 *
 * @example
 * activeValidatorsPerOperator([{ operator_id: '0', funded_validators: 10 }, { operator_id: '1', funded_validators: 4 }], [3, 2, 1])
 * // [{ operator_id: '0', active_validators: 8n }, { operator_id: '1', active_validators: 3n }]
 */
export function activeValidatorsPerOperator(
  funded: readonly { operator_id: string; funded_validators: number | bigint }[],
  stoppedValidatorCountPerOperator: readonly number[],
): { operator_id: string; active_validators: bigint }[] {
  return funded.map((operator, index) => {
    const fundedCount = count(operator.funded_validators, 'funded_validators')
    const stopped = count(stoppedValidatorCountPerOperator[index + 1] ?? 0, 'stopped validators')
    if (stopped > fundedCount) {
      throw new InvalidInputError('an operator has more stopped than funded validators', {
        details: { operator_id: operator.operator_id, funded: String(fundedCount), stopped: String(stopped) },
      })
    }
    return { operator_id: operator.operator_id, active_validators: fundedCount - stopped }
  })
}
