import type { Queryable } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { DayKey, MintsAndBurns } from '../../db/repos/records.ts'
import { DayDataError } from './errors.ts'
import { type DayInputs, describeReport } from './inputs.ts'

/** How many wallets a diagnosis names at most. */
const NAMED_WALLETS = 5

/**
 * The report's own supply against its predecessor's and the period's stored mints and burns, in words, when
 * they disagree (undefined when they agree, or for the chain's first report): every share is minted and burned
 * by a Transfer log, so the two pool reads and the logs between them must add up. When they do not, the records
 * cannot reconcile whatever the wallets hold: a pool read answered from another block's state, or a Transfer log
 * missing from the store.
 */
export function supplyFinding(inputs: DayInputs, period: MintsAndBurns): string | undefined {
  const previous = inputs.previous?.total_supply
  if (previous == null) return undefined
  const expected = BigInt(previous) + BigInt(period.mints) - BigInt(period.burns)
  const read = BigInt(inputs.report.total_supply)
  if (expected === read) return undefined
  return (
    `the report's supply (read at block ${inputs.report.block_number}, after its transaction) is ${read} shares; ` +
    `its predecessor's ${previous} plus the period's stored mints ${period.mints} less burns ${period.burns} is ` +
    `${expected} (${read - expected} apart): the pool reads and the stored Transfer logs disagree (a read ` +
    `answered from another block's state, or a log missing from the store)`
  )
}

/**
 * What the store shows about a run that does not reconcile, in words: the previous day's stored balances against
 * its report's supply (equal when that day was computed: unequal now, its records changed since), and the wallets
 * of this run whose balance is not their previous balance plus the period's transfers as stored now (what the run
 * read is not what the store holds: a read that missed a write, or a write since). Empty when the store shows
 * neither. A diagnosis that cannot be read says so rather than hiding the day's error.
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
 * the diagnosis appended (`supplyFinding` over the period's stored mints and burns `period`, then
 * `diagnoseReconciliation`) and kept in its details.
 */
export async function unreconciledDayError(
  db: Queryable,
  inputs: DayInputs,
  key: DayKey,
  violations: readonly string[],
  period: MintsAndBurns,
): Promise<DayDataError> {
  const pool = supplyFinding(inputs, period)
  const findings = [...(pool ? [pool] : []), ...(await diagnoseReconciliation(db, inputs, key))]
  const where = findings.length > 0 ? `. The store shows: ${findings.join('; ')}` : ''
  return new DayDataError(
    `${describeReport(inputs.day)}: the records do not reconcile with the report: ${violations.join('; ')}${where}`,
    { details: { violations, findings } },
  )
}
