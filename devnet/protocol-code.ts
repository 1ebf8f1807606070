/**
 * The protocol's own deployed code, as the devnet deploys it: the creation bytecode and ABI of every mainnet
 * implementation, the TUPProxy and the Firewall, read from `fixtures/protocol/mainnet/bytecode` (extracted from
 * the protocol's deployments files; Business Source License 1.1, `fixtures/protocol/LICENSE-BUSL-1.1`). Local
 * devnet and tests only: no production path imports this module.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { Abi, Hex } from 'viem'

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'protocol', 'mainnet')

/** The proxied protocol contracts whose implementations the devnet deploys, by fixture name. */
export type ProtocolContractName =
  | 'River'
  | 'Oracle'
  | 'Allowlist'
  | 'RedeemManager'
  | 'OperatorsRegistry'
  | 'Withdraw'
  | 'ELFeeRecipient'
  | 'CoverageFund'

/** One deployable code: its creation bytecode (no constructor arguments) and its ABI. */
export interface ProtocolCode {
  /** the fixture's name, e.g. `RiverV1_Implementation_1_2_1`, `TUPProxy`, `Firewall` */
  artifact: string
  creation: Hex
  abi: Abi
  /** keccak256 of the runtime code the deployment leaves (immutables zero) */
  runtimeCodeHash: Hex
}

const cache = new Map<string, ProtocolCode>()

/** Reads a fixture file of the mainnet folder. */
function readFixture<T>(...parts: string[]): T {
  return JSON.parse(readFileSync(path.join(FIXTURES, ...parts), 'utf8')) as T
}

/**
 * The code of a fixture artifact: an implementation (`<Name>V1_Implementation_<x_y_z>`), `TUPProxy` or
 * `Firewall`. The ABI comes from the fixture's ABI file (the five contracts the service reads), from the
 * bytecode fixture itself (Withdraw, ELFeeRecipient, CoverageFund), or from a proxy's or firewall's file.
 *
 * @example
 * protocolCode('RiverV1_Implementation_1_2_1').creation // '0x6080...'
 */
export function protocolCode(artifact: string): ProtocolCode {
  const hit = cache.get(artifact)
  if (hit) return hit
  const fixture = readFixture<{ creation: Hex; runtimeCodeHash: Hex; abi?: Abi }>(
    'bytecode',
    `${artifact}.json`,
  )
  const abiFile =
    artifact === 'TUPProxy'
      ? 'River_Proxy.json'
      : artifact === 'Firewall'
        ? 'AllowlistFirewall.json'
        : `${artifact}.json`
  const abi = fixture.abi ?? readFixture<{ abi: Abi }>(abiFile).abi
  const code = { artifact, creation: fixture.creation, abi, runtimeCodeHash: fixture.runtimeCodeHash }
  cache.set(artifact, code)
  return code
}

/**
 * The fixture name of a contract's implementation at a version.
 *
 * @example
 * implementationArtifact('River', '1.0.1') // 'RiverV1_Implementation_1_0_1'
 */
export function implementationArtifact(contract: ProtocolContractName, version: string): string {
  return `${contract}V1_Implementation_${version.replaceAll('.', '_')}`
}

/**
 * Every protocol ABI the devnet deploys, merged (errors and events of every version), for naming reverts and
 * decoding logs in tests.
 */
export function protocolErrorsAbi(): Abi {
  const index = readFixture<{ artifacts: Record<string, unknown> }>('bytecode', 'index.json')
  const seen = new Set<string>()
  const items: Abi[number][] = []
  for (const artifact of Object.keys(index.artifacts)) {
    for (const item of protocolCode(artifact).abi) {
      if (item.type !== 'error') continue
      const key = `${item.name}(${item.inputs.map((i) => i.type).join(',')})`
      if (seen.has(key)) continue
      seen.add(key)
      items.push(item)
    }
  }
  return items
}
