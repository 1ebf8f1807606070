import type { Queryable } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { DayKey } from '../../db/repos/records.ts'
import { DayDataError } from './errors.ts'
import { type DayInputs, describeReport } from './inputs.ts'

/** How many wallets a diagnosis names at most. */
const NAMED_WALLETS = 5

/**
 * What the store shows about a run that does not reconcile, in words: the previous day's stored balances
 * against its report's supply (equal when that day was computed: unequal now, its records changed since), and
 * the wallets of this run whose balance is not their previous balance plus the period's transfers as stored now
 * (what the run read is not what the store holds: a read that missed a write, or a write since). Empty when
 * the store shows neither. A diagnosis that cannot be read says so rather than hiding the day's error.
 *
 * @example
 * await diagnoseReconciliation(db, inputs, key) // ['the previous day's stored balances sum to …']
 */
async function diagnoseReconciliation(db: Queryable, inputs: DayInputs, key: DayKey): Promise<string[]> {
  try {
    const found = await createRepos(db).records.reconciliationSuspects(
      key,
      inputs.previousKey,
      inputs.window,
      NAMED_WALLETS,
    )
    const findings: string[] = []
    const supply = inputs.previous?.total_supply
    if (
      found.previousBalances !== null &&
      supply != null &&
      BigInt(found.previousBalances) !== BigInt(supply)
    ) {
      findings.push(
        `the previous day's stored balances (report epoch ${inputs.previousKey?.epoch}, version ` +
          `${inputs.previousKey?.version}) sum to ${found.previousBalances} shares, its report's supply is ` +
          `${supply}: its records changed after it was computed`,
      )
    }
    if (found.wallets.length > 0) {
      const named = found.wallets
        .map((w) => `${w.address} stored ${w.stored ?? 'no record'}, expected ${w.expected}`)
        .join('; ')
      findings.push(
        `wallets whose balance is not their previous balance plus the period's transfers as stored now ` +
          `(at most ${NAMED_WALLETS}): ${named}`,
      )
    }
    return findings
  } catch (err) {
    return [`the store could not be read for a diagnosis: ${(err as Error).message}`]
  }
}

/**
 * The error of a run whose records do not reconcile with its report (`violations`, the engine's words), with
 * the store's diagnosis appended (`diagnoseReconciliation`) and kept in its details.
 */
export async function unreconciledDayError(
  db: Queryable,
  inputs: DayInputs,
  key: DayKey,
  violations: readonly string[],
): Promise<DayDataError> {
  const findings = await diagnoseReconciliation(db, inputs, key)
  const where = findings.length > 0 ? `. The store shows: ${findings.join('; ')}` : ''
  return new DayDataError(
    `${describeReport(inputs.day)}: the records do not reconcile with the report: ${violations.join('; ')}${where}`,
    { details: { violations, findings } },
  )
}
