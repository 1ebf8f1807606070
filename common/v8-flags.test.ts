import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { V8_FLAGS } from './v8-flags.ts'

const probe = path.join(import.meta.dirname, '..', 'test', 'helpers', 'pretenuring-probe.mjs')

/** Old-generation growth (MB) of the probe's short-lived objects, in a process of its own with `flags`. */
function oldSpaceGrowthMb(flags: readonly string[]): number {
  const out = execFileSync(process.execPath, [probe, ...flags], { encoding: 'utf8' })
  return (JSON.parse(out.trim()) as { old_space_growth_mb: number }).old_space_growth_mb
}

describe('V8 flags of the processes serving the API', () => {
  test('behavior: after long-lived work at an allocation site, its short-lived objects still die young', () => {
    // with V8's defaults the site is pretenured: tens of MB of objects that die at once are born old (the
    // class of defect: a process that had computed a day made every later API request's objects old)
    expect(oldSpaceGrowthMb([])).toBeGreaterThan(20)
    // with the service's flags they stay in the young generation and die there
    expect(oldSpaceGrowthMb(V8_FLAGS)).toBeLessThan(4)
  })
})
