import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
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

  test('behavior: deploying from the committed artifacts never loads solc (~130 MB, ~1 s)', () => {
    const script = `
      const { loadArtifacts, devnetErrorsAbi } = await import('./devnet/compile.ts')
      await import('./devnet/index.ts')
      devnetErrorsAbi(loadArtifacts())
      const { createRequire } = await import('node:module')
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/node_modules/solc/'))
      process.stdout.write(JSON.stringify(loaded))`
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('..', import.meta.url),
      encoding: 'utf8',
    })
    expect(JSON.parse(out)).toEqual([])
  })
})
