import { readFileSync } from 'node:fs'
import { toEventSelector } from 'viem'
import { describe, expect, test } from 'vitest'
import { PROCESSED_REPORT_TOPIC } from '../chain/abi.ts'
import { ARTIFACTS_PATH, type Artifacts, compileContracts, hashSources, readSources } from './compile.ts'

describe('compileContracts', () => {
  test('behavior: the committed build/artifacts.json is what the current sources compile to', () => {
    const committed = JSON.parse(readFileSync(ARTIFACTS_PATH, 'utf8')) as Artifacts
    // if this fails: run `npx tsx devnet/compile.ts` and commit devnet/build/artifacts.json
    expect(committed.sourceHash).toBe(hashSources(readSources()))
    const fresh = compileContracts()
    expect(fresh.compiler).toBe(committed.compiler)
    for (const [name, artifact] of Object.entries(fresh.contracts)) {
      const cached = committed.contracts[name as keyof Artifacts['contracts']]
      expect(cached.bytecode, name).toBe(artifact.bytecode)
      expect(cached.abi, name).toEqual(artifact.abi)
    }
  })

  test('behavior: River declares ProcessedConsensusLayerReport with the published topic0', () => {
    const committed = JSON.parse(readFileSync(ARTIFACTS_PATH, 'utf8')) as Artifacts
    const event = committed.contracts.River.abi.find(
      (item) => item.type === 'event' && item.name === 'ProcessedConsensusLayerReport',
    )
    if (event?.type !== 'event') throw new Error('event missing')
    expect(toEventSelector(event)).toBe(PROCESSED_REPORT_TOPIC)
  })
})
