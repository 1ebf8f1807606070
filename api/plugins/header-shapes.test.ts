import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, test } from 'vitest'

const probe = path.join(import.meta.dirname, '..', '..', 'test', 'helpers', 'header-shapes-probe.ts')

/** The share of answers whose header object had fast properties, in a process of its own (`learn` or not). */
function fastShare(mode: 'learn' | 'none'): number {
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', probe, mode], {
    encoding: 'utf8',
  })
  return (JSON.parse(out.trim()) as { fast_share: number }).fast_share
}

describe('keepAnswerHeadersFast', () => {
  test('behavior: answers with 26 headers keep their header objects fast once their shapes are learned', () => {
    // without it V8 makes each answer's header object a dictionary (the class of cost: bench:api)
    expect(fastShare('none')).toBe(0)
    expect(fastShare('learn')).toBe(1)
  })
})
