/**
 * Compiles the devnet contracts with solc from npm (soljson, in-process) and caches the result in
 * `devnet/build/artifacts.json`. Run `npx tsx devnet/compile.ts` after editing `devnet/contracts/`;
 * `compile.test.ts` fails when the committed artifacts no longer match the sources.
 *
 * solc is loaded only to compile (it costs ~130 MB and ~1 s to load): starting the devnet from the
 * committed artifacts never loads it.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Abi, Hex } from 'viem'

interface Solc {
  version(): string
  compile(input: string): string
}
let solcModule: Solc | undefined
/** solc (soljson), loaded on first use only. */
function solc(): Solc {
  solcModule ??= createRequire(import.meta.url)('solc') as Solc
  return solcModule
}

const here = path.dirname(fileURLToPath(import.meta.url))
const CONTRACTS_DIR = path.join(here, 'contracts')
export const ARTIFACTS_PATH = path.join(here, 'build', 'artifacts.json')

/**
 * The devnet's own contracts (contract name -> source file): only what has no real counterpart on a local
 * chain, the ETH price feeds (Chainlink-shaped, not protocol contracts). The protocol itself runs its own
 * bytecode (protocol-code.ts); the beacon deposit contract is a five-byte stub (protocol-releases.ts).
 */
export const CONTRACT_SOURCES = {
  PriceFeed: 'PriceFeed.sol',
} as const

export type ContractName = keyof typeof CONTRACT_SOURCES

export interface Artifact {
  abi: Abi
  bytecode: Hex
}

export interface Artifacts {
  compiler: string
  /** sha256 over the compiler version, the settings and every source file. */
  sourceHash: string
  contracts: Record<ContractName, Artifact>
}

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'prague',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
} as const

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[]
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
}

/** Reads every `.sol` file of `devnet/contracts/`, keyed by file name (the solc source unit name). */
export function readSources(): Record<string, { content: string }> {
  const sources: Record<string, { content: string }> = {}
  for (const file of readdirSync(CONTRACTS_DIR).sort()) {
    if (file.endsWith('.sol'))
      sources[file] = { content: readFileSync(path.join(CONTRACTS_DIR, file), 'utf8') }
  }
  return sources
}

/**
 * Hash of what determines the bytecode: compiler version (default: the installed solc's), settings,
 * sources.
 */
export function hashSources(sources: Record<string, { content: string }>, compiler?: string): string {
  const hash = createHash('sha256')
  hash.update(compiler ?? solc().version())
  hash.update(JSON.stringify(SETTINGS))
  for (const [name, { content }] of Object.entries(sources)) hash.update(`${name}\0${content}\0`)
  return hash.digest('hex')
}

/**
 * Compiles the contracts in-process (~1-2 s).
 *
 * @example
 * const artifacts = compileContracts()
 * artifacts.contracts.RiverV1_2.bytecode // '0x6080...'
 */
export function compileContracts(): Artifacts {
  const sources = readSources()
  const input = { language: 'Solidity', sources, settings: SETTINGS }
  const output = JSON.parse(solc().compile(JSON.stringify(input))) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`)
  }
  const contracts = {} as Record<ContractName, Artifact>
  for (const [name, file] of Object.entries(CONTRACT_SOURCES) as [ContractName, string][]) {
    const compiled = output.contracts?.[file]?.[name]
    if (!compiled) throw new Error(`solc produced no output for ${file}:${name}`)
    contracts[name] = { abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` }
  }
  const compiler = solc().version()
  return { compiler, sourceHash: hashSources(sources, compiler), contracts }
}

/**
 * The compiled contracts: the cached `build/artifacts.json` when it matches the sources (checked against
 * the compiler version it records, so solc is not loaded), otherwise a fresh in-process compile (so an
 * edited contract is never deployed from a stale cache).
 */
export function loadArtifacts(): Artifacts {
  try {
    const cached = JSON.parse(readFileSync(ARTIFACTS_PATH, 'utf8')) as Artifacts
    if (cached.sourceHash === hashSources(readSources(), cached.compiler)) return cached
  } catch {
    // no cache yet: compile below
  }
  return compileContracts()
}

/** Every custom error of the devnet contracts (for decoding revert data). */
export function devnetErrorsAbi(artifacts: Artifacts = loadArtifacts()): Abi {
  const seen = new Set<string>()
  const errors: Abi[number][] = []
  for (const artifact of Object.values(artifacts.contracts)) {
    for (const item of artifact.abi) {
      if (item.type !== 'error') continue
      const key = `${item.name}(${item.inputs.map((i) => i.type).join(',')})`
      if (seen.has(key)) continue
      seen.add(key)
      errors.push(item)
    }
  }
  return errors
}

/** Compiles and writes `build/artifacts.json`. */
export function writeArtifacts(): Artifacts {
  const artifacts = compileContracts()
  writeFileSync(ARTIFACTS_PATH, `${JSON.stringify(artifacts, null, 1)}\n`)
  return artifacts
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = performance.now()
  const artifacts = writeArtifacts()
  const sizes = Object.entries(artifacts.contracts).map(
    ([name, a]) => `${name} ${(a.bytecode.length - 2) / 2} B`,
  )
  console.log(`compiled with solc ${artifacts.compiler} in ${Math.round(performance.now() - started)} ms`)
  console.log(sizes.join('\n'))
  console.log(`wrote ${path.relative(process.cwd(), ARTIFACTS_PATH)}`)
}
