import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import { decodeInput, toJsonValue, VECTOR_FILES } from '../fixtures/engine/vectors.ts'

interface StoredFile {
  description: string
  cases: { name: string; input: unknown; output: unknown }[]
}

describe('golden vectors', () => {
  for (const [name, file] of Object.entries(VECTOR_FILES)) {
    test(`behavior: fixtures/engine/${name}.json is reproduced exactly`, () => {
      const text = readFileSync(new URL(`../fixtures/engine/${name}.json`, import.meta.url), 'utf8')
      const stored = JSON.parse(text) as StoredFile
      const inputs = (decodeInput(text) as StoredFile).cases.map((c) => c.input)
      expect(stored.cases.length).toBeGreaterThan(0)
      stored.cases.forEach((vector, i) => {
        expect({ case: vector.name, output: toJsonValue(file.run(inputs[i])) }).toEqual({
          case: vector.name,
          output: vector.output,
        })
      })
    })
  }

  test('behavior: the public lots example gives a total of 0.0041516089956458', () => {
    const stored = JSON.parse(
      readFileSync(new URL('../fixtures/engine/lots.json', import.meta.url), 'utf8'),
    ) as StoredFile
    expect(stored.cases[0]?.output).toMatchObject({
      balance: '4',
      accrued_rewards: '0.0041516089956458',
      lots: [{ accrued_rewards: '0.0009210124683437' }, { accrued_rewards: '0.0032305965273021' }],
    })
  })
})
