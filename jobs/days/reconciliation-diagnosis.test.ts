import { describe, expect, test } from 'vitest'
import type { DayInputs } from './inputs.ts'
import { supplyFinding } from './reconciliation-diagnosis.ts'

/** The fields of a day's inputs that `supplyFinding` reads. */
function inputsOf(previousSupply: string | undefined, supply: string): DayInputs {
  return {
    report: { total_supply: supply, block_number: '256' },
    previous: previousSupply === undefined ? undefined : { total_supply: previousSupply },
  } as unknown as DayInputs
}

describe('supplyFinding', () => {
  test('behavior: none when the predecessor supply plus the period mints less its burns is the report supply', () => {
    expect(supplyFinding(inputsOf('1000', '1150'), { mints: '200', burns: '50' })).toBeUndefined()
    // the chain's first report has no predecessor to hold it against
    expect(supplyFinding(inputsOf(undefined, '1'), { mints: '0', burns: '0' })).toBeUndefined()
  })

  test('behavior: names both sides and the gap when the pool read is ahead of the stored logs', () => {
    const finding = supplyFinding(inputsOf('1000', '1400'), { mints: '200', burns: '50' })
    expect(finding).toMatch(/the report's supply \(read at block 256, after its transaction\) is 1400 shares/)
    expect(finding).toMatch(
      /predecessor's 1000 plus the period's stored mints 200 less burns 50 is 1150 \(250 apart\)/,
    )
  })

  test('behavior: a supply behind the stored logs shows a negative gap', () => {
    expect(supplyFinding(inputsOf('1000', '1100'), { mints: '200', burns: '50' })).toMatch(
      /is 1150 \(-50 apart\)/,
    )
  })
})
