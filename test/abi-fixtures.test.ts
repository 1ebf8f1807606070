/**
 * Every ABI the service uses (chain/abi.ts) and every ABI the devnet sends to the protocol (devnet/abi.ts) is
 * checked against the protocol's real implementation ABIs (fixtures/protocol, extracted from the protocol's
 * deployment files): an event must have the same topic0 and the same `indexed` flags, a function the same
 * selector and the same output types, as in at least one real version of the matching contract. Each test's
 * name says which versions carry the item. No services: it reads JSON files only.
 */
import fs from 'node:fs'
import path from 'node:path'
import { type AbiEvent, type AbiFunction, toEventSelector, toFunctionSelector } from 'viem'
import { describe, expect, test } from 'vitest'
import * as chainAbis from '../chain/abi.ts'
import * as devnetAbis from '../devnet/abi.ts'
import { type ChainIndex, compareVersions } from '../fixtures/protocol/extract.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const FIXTURES = path.join(ROOT, 'fixtures/protocol')

/** The real contracts the ABIs are compared with: the five proxied ones, the AllowlistFirewall, the proxy. */
type Contract =
  | 'River'
  | 'Oracle'
  | 'Allowlist'
  | 'RedeemManager'
  | 'OperatorsRegistry'
  | 'Firewall'
  | 'Proxy'

interface Param {
  type: string
  name?: string
  indexed?: boolean
  components?: readonly Param[]
}
interface Item {
  type: string
  name?: string
  inputs?: readonly Param[]
  outputs?: readonly Param[]
  anonymous?: boolean
}

/** One real ABI: a contract's implementation version (or its proxy, or the firewall) on one chain. */
interface RealAbi {
  contract: Contract
  chain: string
  /** x.y.z for implementations; the deployment's name for the proxy and firewall */
  version: string
  abi: readonly Item[]
}

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T
}

/** Every real ABI of the fixtures, implementations in version order per chain. */
function loadRealAbis(): RealAbi[] {
  const out: RealAbi[] = []
  for (const chain of ['mainnet', 'hoodi']) {
    const index = readJson<ChainIndex>(path.join(FIXTURES, chain, 'index.json'))
    const abiOf = (file: string) => readJson<{ abi: Item[] }>(path.join(FIXTURES, chain, file)).abi
    for (const [name, entry] of Object.entries(index.contracts)) {
      const seen = new Set<string>()
      for (const impl of [...entry.implementations].sort((a, b) => compareVersions(a.version, b.version))) {
        if (seen.has(impl.file)) continue
        seen.add(impl.file)
        out.push({ contract: name as Contract, chain, version: impl.version, abi: abiOf(impl.file) })
      }
      out.push({ contract: 'Proxy', chain, version: `${name}_Proxy`, abi: abiOf(entry.proxy.file) })
    }
    out.push({ contract: 'Firewall', chain, version: index.firewall.name, abi: abiOf(index.firewall.file) })
  }
  return out
}

const REAL = loadRealAbis()

/** The canonical ABI type of a parameter: tuples spelled out as `(a,b)` with their array suffix. */
function canonicalType(param: Param): string {
  if (param.type.startsWith('tuple')) {
    return `(${(param.components ?? []).map(canonicalType).join(',')})${param.type.slice('tuple'.length)}`
  }
  return param.type
}

/**
 * What must be equal between our ABI and a real one: the event's topic0 and indexed flags (a flag decides
 * whether a value sits in a topic or in data), or the function's selector and output types (a decode uses them).
 */
function signatureKey(item: Item): string {
  if (item.type === 'event') {
    const indexed = (item.inputs ?? []).map((p) => (p.indexed ? 'i' : '-')).join('')
    return `event ${toEventSelector(item as AbiEvent)} [${indexed}]${item.anonymous ? ' anonymous' : ''}`
  }
  const outputs = (item.outputs ?? []).map(canonicalType).join(',')
  return `function ${toFunctionSelector(item as AbiFunction)} -> (${outputs})`
}

/** Human form of an item with its indexed flags and outputs, for test names and failure messages. */
function describeItem(item: Item): string {
  const inputs = (item.inputs ?? []).map((p) => `${canonicalType(p)}${p.indexed ? ' indexed' : ''}`)
  const outputs =
    item.type === 'function' ? ` returns (${(item.outputs ?? []).map(canonicalType).join(', ')})` : ''
  return `${item.type} ${item.name}(${inputs.join(', ')})${outputs}`
}

function isSignatureItem(item: Item): boolean {
  return (item.type === 'event' || item.type === 'function') && typeof item.name === 'string'
}

/**
 * Versions as a reader wants them: per chain, consecutive versions in runs (`0.4.0..0.5.0`), a run reaching
 * the newest version as `1.0.0+`.
 *
 * @example
 * describeVersions([{contract: 'River', chain: 'mainnet', version: '1.0.0'}, ...]) // 'River 1.0.0+ (mainnet); River 1.2.1 (hoodi)'
 */
function describeVersions(matches: readonly RealAbi[]): string {
  const parts: string[] = []
  for (const chain of ['mainnet', 'hoodi']) {
    const byContract = new Map<Contract, Set<string>>()
    for (const m of matches.filter((m) => m.chain === chain)) {
      byContract.set(m.contract, (byContract.get(m.contract) ?? new Set()).add(m.version))
    }
    for (const [contract, versions] of byContract) {
      if (contract === 'Proxy' || contract === 'Firewall') {
        parts.push(`${[...versions].join(', ')} (${chain})`)
        continue
      }
      const all = REAL.filter((r) => r.chain === chain && r.contract === contract).map((r) => r.version)
      const runs: string[] = []
      let start = -1
      for (let i = 0; i <= all.length; i++) {
        const inRun = i < all.length && versions.has(all[i]!)
        if (inRun && start < 0) start = i
        if (!inRun && start >= 0) {
          const first = all[start]!
          const last = all[i - 1]!
          runs.push(
            first === last ? first : i === all.length && start > 0 ? `${first}+` : `${first}..${last}`,
          )
          start = -1
        }
      }
      parts.push(`${contract} ${runs.join(', ')} (${chain})`)
    }
  }
  return parts.join('; ')
}

/** The real ABIs of `contract` holding an item with `item`'s signature. */
function matchingVersions(contract: Contract, item: Item): RealAbi[] {
  const key = signatureKey(item)
  return REAL.filter(
    (r) =>
      r.contract === contract &&
      r.abi.some((x) => x.type === item.type && x.name === item.name && signatureKey(x) === key),
  )
}

/** The distinct forms a name takes in the real versions of a contract (for a mismatch's message). */
function realForms(contract: Contract, item: Item): string[] {
  const forms = new Map<string, RealAbi[]>()
  for (const r of REAL.filter((r) => r.contract === contract)) {
    for (const x of r.abi.filter((x) => x.type === item.type && x.name === item.name)) {
      const form = describeItem(x)
      forms.set(form, [...(forms.get(form) ?? []), r])
    }
  }
  return [...forms].map(([form, where]) => `${form} in ${describeVersions(where)}`)
}

/** A mismatch's message: our form and the real forms of the same name. */
function mismatchMessage(where: string, contract: Contract, item: Item): string {
  const forms = realForms(contract, item)
  return (
    `${where}: ${describeItem(item)} ` +
    `is in no real ${contract} version; ` +
    (forms.length ? `the real forms are:\n  ${forms.join('\n  ')}` : 'no real version has that name')
  )
}

/** chain/abi.ts export -> real contract, by name prefix (checked in order). */
const EXPORT_PREFIXES: readonly [RegExp, Contract][] = [
  [/Firewall|^firewall/, 'Firewall'],
  [/^proxy/, 'Proxy'],
  [/^river/, 'River'],
  [/^redeemManager/, 'RedeemManager'],
  [/^allowlist/, 'Allowlist'],
  [/^oracle/, 'Oracle'],
  [/^operatorsRegistry/, 'OperatorsRegistry'],
]

function contractOfExport(name: string): Contract | undefined {
  return EXPORT_PREFIXES.find(([re]) => re.test(name))?.[1]
}

/** The exports of chain/abi.ts that are ABI arrays (every item an object with a `type`). */
const ABI_EXPORTS = Object.entries(chainAbis as Record<string, unknown>).filter(
  (entry): entry is [string, readonly Item[]] =>
    Array.isArray(entry[1]) &&
    entry[1].length > 0 &&
    entry[1].every((x: unknown) => typeof x === 'object' && x !== null && 'type' in x),
)

describe('the ABIs of chain/abi.ts against the real implementations', () => {
  test('behavior: the fixtures hold every contract and chain, and chain/abi.ts exports ABIs', () => {
    for (const contract of [
      'River',
      'Oracle',
      'Allowlist',
      'RedeemManager',
      'OperatorsRegistry',
      'Firewall',
      'Proxy',
    ]) {
      for (const chain of ['mainnet', 'hoodi']) {
        expect(
          REAL.some((r) => r.contract === contract && r.chain === chain),
          `${contract} on ${chain}`,
        ).toBe(true)
      }
    }
    expect(ABI_EXPORTS.map(([name]) => name)).toEqual(expect.arrayContaining(['riverAbi', 'allowlistAbi']))
  })

  for (const [exportName, abi] of ABI_EXPORTS) {
    const contract = contractOfExport(exportName)
    describe(exportName, () => {
      test(`behavior: ${exportName} maps to a real contract (${contract ?? 'none'})`, () => {
        expect(contract, `add a prefix for ${exportName} to EXPORT_PREFIXES`).toBeDefined()
      })
      if (!contract) return
      for (const item of abi.filter(isSignatureItem)) {
        const matches = matchingVersions(contract, item)
        const carried = matches.length ? describeVersions(matches) : 'NO real version'
        test(`${item.type} ${item.name}: ${carried}`, () => {
          expect(matches.length, mismatchMessage(exportName, contract, item)).toBeGreaterThan(0)
        })
      }
    })
  }
})

/** devnet/abi.ts export -> real contract, by name prefix (checked in order). */
const DEVNET_PREFIXES: readonly [RegExp, Contract][] = [
  [/^devnetFirewall/, 'Firewall'],
  [/^devnetProxy/, 'Proxy'],
  [/^devnetRiver/, 'River'],
  [/^devnetOracle/, 'Oracle'],
  [/^devnetRedeemManager/, 'RedeemManager'],
  [/^devnetOperatorsRegistry/, 'OperatorsRegistry'],
  [/^devnetAllowlist/, 'Allowlist'],
]

describe('the ABIs the devnet sends to the protocol (devnet/abi.ts) against the real implementations', () => {
  const exports = Object.entries(devnetAbis as Record<string, unknown>).filter(
    (entry): entry is [string, readonly Item[]] => Array.isArray(entry[1]) && entry[1].length > 0,
  )
  const mapped = exports.filter(([name]) => DEVNET_PREFIXES.some(([re]) => re.test(name)))
  const unmapped = exports.filter(([name]) => !mapped.some(([m]) => m === name)).map(([name]) => name)

  test(`behavior: compared: ${mapped.map(([name]) => name).join(', ')}; not protocol ABIs: ${unmapped.join(', ')}`, () => {
    expect(mapped.length).toBeGreaterThan(0)
    expect(unmapped).toEqual(['devnetPriceFeedAbi'])
  })

  for (const [name, abi] of mapped) {
    const contract = DEVNET_PREFIXES.find(([re]) => re.test(name))![1]
    describe(`${name} (real: ${contract})`, () => {
      for (const item of abi.filter(isSignatureItem)) {
        const matches = matchingVersions(contract, item)
        test(`${item.type} ${item.name}: ${matches.length ? describeVersions(matches) : 'NO real version'}`, () => {
          expect(matches.length, mismatchMessage(`devnet ${name}`, contract, item)).toBeGreaterThan(0)
        })
      }
    })
  }
})
