/**
 * The protocol's creation bytecode kept in `fixtures/protocol/<chain>/bytecode/` (issue 37, item 1): every
 * artifact of mainnet and Hoodi is deployed on one anvil with its constructor's arguments (none for an
 * implementation; an implementation, an admin and no call for the TUPProxy; a governor, an executor and a
 * destination for the Firewall), and `eth_getCode` must hash to the deployments file's runtime code with its
 * size. The one exception is said in `chain/code-hashes.ts` (`immutables`) and in fixtures/protocol/README.md:
 * Hoodi's Firewall keeps its destination as an immutable, two 32-byte words zeroed before hashing, and the test
 * checks that they, and nothing else, hold it. The fixtures also agree with the ABI files' index, and the
 * license text is beside them.
 */
import fs from 'node:fs'
import path from 'node:path'
import { type Hex, keccak256 } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { KNOWN_CODES, maskImmutables } from '../chain/code-hashes.ts'
import { type Anvil, startAnvil } from '../devnet/anvil.ts'
import type { ChainIndex } from '../fixtures/protocol/extract.ts'
import {
  type BytecodeArtifact,
  bytecodeArtifacts,
  PROTOCOL_CHAINS as CHAINS,
  creationData,
  type Deployed,
  deployCreations,
  PROTOCOL_FIXTURES,
  readProtocolFixture,
} from './helpers/protocol-bytecode.ts'

/** The proxy's admin (an EOA) and the firewall's governor and executor: any addresses serve. */
const PROXY_ADMIN = '0x00000000000000000000000000000000000a0111'
const GOVERNOR = '0x00000000000000000000000000000000000b0222'
const EXECUTOR = '0x00000000000000000000000000000000000c0333'
/** The firewall's destination: distinctive, so that every place the code holds it can be found. */
const DESTINATION = '0xd0d0d0d0c0c0c0c0b0b0b0b0a0a0a0a0e5e5e5e5'

const artifacts = bytecodeArtifacts()
const key = (a: BytecodeArtifact) => `${a.chain}/${a.name}`

let anvil: Anvil
/** chain/artifact -> what anvil holds after its creation */
const deployed = new Map<string, Deployed>()

beforeAll(async () => {
  anvil = await startAnvil()
  // implementations and firewalls first; then the proxies, each in front of its chain's River 1.2.1
  const first = artifacts.filter((a) => a.name !== 'TUPProxy')
  const created = await deployCreations(
    anvil.rpcUrl,
    first.map((a) =>
      creationData(a.chain, a.name, a.name === 'Firewall' ? [GOVERNOR, EXECUTOR, DESTINATION, []] : []),
    ),
  )
  for (const [i, a] of first.entries()) deployed.set(key(a), created[i]!)
  const proxies = artifacts.filter((a) => a.name === 'TUPProxy')
  const fronted = await deployCreations(
    anvil.rpcUrl,
    proxies.map((a) =>
      creationData(a.chain, a.name, [
        deployed.get(`${a.chain}/RiverV1_Implementation_1_2_1`)!.address,
        PROXY_ADMIN,
        '0x',
      ]),
    ),
  )
  for (const [i, a] of proxies.entries()) deployed.set(key(a), fronted[i]!)
}, 30_000)

afterAll(async () => {
  await anvil?.stop()
})

/** Byte offsets where `code` holds `address` as a 32-byte word (left-padded). */
function wordsHolding(code: Hex, address: string): number[] {
  const word = address.slice(2).toLowerCase().padStart(64, '0')
  const found: number[] = []
  for (let i = code.indexOf(word, 2); i !== -1; i = code.indexOf(word, i + 2)) {
    if ((i - 2) % 2 === 0) found.push((i - 2) / 2)
  }
  return found
}

describe('protocol bytecode fixtures', () => {
  test('behavior: every mainnet and Hoodi artifact is deployed (29 and 10)', () => {
    expect(artifacts.filter((a) => a.chain === 'mainnet')).toHaveLength(29)
    expect(artifacts.filter((a) => a.chain === 'hoodi')).toHaveLength(10)
    for (const a of artifacts) expect(deployed.get(key(a))?.receipt.status, key(a)).toBe('success')
  })

  test.each(artifacts.filter((a) => a.entry.version !== null).map((a) => [a.chain, a.name, a] as const))(
    'behavior: %s %s deployed holds the deployments file’s runtime code (hash and size)',
    (chain, name, a) => {
      const { code } = deployed.get(`${chain}/${name}`)!
      expect((code.length - 2) / 2).toBe(a.fixture.runtimeCodeSize)
      expect(keccak256(code)).toBe(a.fixture.runtimeCodeHash)
      expect(a.entry).toEqual({
        contract: expect.any(String),
        version: expect.any(String),
        runtimeCodeHash: a.fixture.runtimeCodeHash,
        runtimeCodeSize: a.fixture.runtimeCodeSize,
      })
    },
  )

  test.each(CHAINS)(
    'behavior: the %s TUPProxy in front of an implementation holds its runtime code; no immutable',
    (chain) => {
      const a = artifacts.find((x) => x.chain === chain && x.name === 'TUPProxy')!
      const { code } = deployed.get(`${chain}/TUPProxy`)!
      expect((code.length - 2) / 2).toBe(a.fixture.runtimeCodeSize)
      expect(keccak256(code)).toBe(a.fixture.runtimeCodeHash)
      expect(wordsHolding(code, PROXY_ADMIN)).toEqual([])
    },
  )

  test('behavior: mainnet’s Firewall holds its runtime code as is (its destination is in storage)', () => {
    const a = artifacts.find((x) => x.chain === 'mainnet' && x.name === 'Firewall')!
    const { code } = deployed.get('mainnet/Firewall')!
    expect(keccak256(code)).toBe(a.fixture.runtimeCodeHash)
    expect(code).not.toContain(DESTINATION.slice(2))
    expect(KNOWN_CODES.find((c) => c.hash === a.fixture.runtimeCodeHash)?.immutables).toEqual([])
  })

  test('behavior: Hoodi’s Firewall equals its runtime code once the two words holding its immutable destination are zeroed, and only those', () => {
    const a = artifacts.find((x) => x.chain === 'hoodi' && x.name === 'Firewall')!
    const { code } = deployed.get('hoodi/Firewall')!
    const immutables = KNOWN_CODES.find((c) => c.hash === a.fixture.runtimeCodeHash)!.immutables
    expect(immutables).toEqual([1070, 1297])
    expect((code.length - 2) / 2).toBe(a.fixture.runtimeCodeSize)
    expect(keccak256(code)).not.toBe(a.fixture.runtimeCodeHash) // the masking is needed
    expect(wordsHolding(code, DESTINATION)).toEqual(immutables) // the destination is there, and nowhere else
    expect(code.split(DESTINATION.slice(2)).length - 1).toBe(immutables.length)
    expect(keccak256(maskImmutables(code, immutables))).toBe(a.fixture.runtimeCodeHash)
  })
})

describe('protocol bytecode fixtures and the ABI files', () => {
  test.each(CHAINS)(
    'behavior: each %s implementation, proxy and firewall has the address and block of the ABI files’ index',
    (chain) => {
      const index = readProtocolFixture<ChainIndex>(chain, 'index.json')
      const mine = artifacts.filter((a) => a.chain === chain)
      for (const [contract, { proxy, implementations }] of Object.entries(index.contracts)) {
        const kept = mine.filter((a) => a.entry.contract === contract)
        // every implementation with its own deployments file has its bytecode, at the same address and block
        expect(kept.map((a) => a.fixture.source).sort()).toEqual(
          implementations
            .filter((i) => !i.historyOnly)
            .map((i) => i.file)
            .sort(),
        )
        for (const a of kept) {
          const entry = implementations.find((i) => i.file === a.fixture.source && !i.historyOnly)!
          expect([a.fixture.address, a.fixture.blockNumber, a.entry.version]).toEqual([
            entry.address,
            entry.blockNumber,
            entry.version,
          ])
          expect(a.fixture.args).toEqual([])
        }
        if (contract === 'River') {
          const tup = mine.find((a) => a.name === 'TUPProxy')!
          expect([tup.fixture.source, tup.fixture.address, tup.fixture.blockNumber]).toEqual([
            proxy.file,
            proxy.address,
            proxy.blockNumber,
          ])
        }
      }
      const firewall = mine.find((a) => a.name === 'Firewall')!
      expect([firewall.fixture.source, firewall.fixture.address, firewall.fixture.blockNumber]).toEqual([
        index.firewall.file,
        index.firewall.address,
        index.firewall.blockNumber,
      ])
      // the contracts no ABI file holds carry their ABI; the others do not
      for (const a of mine) {
        expect(a.fixture.abi !== undefined, a.name).toBe(
          ['Withdraw', 'ELFeeRecipient', 'CoverageFund'].includes(a.entry.contract),
        )
      }
    },
  )

  test('behavior: the Business Source License 1.1 text is kept beside the fixtures', () => {
    const license = fs.readFileSync(path.join(PROTOCOL_FIXTURES, 'LICENSE-BUSL-1.1'), 'utf8')
    expect(license.startsWith('Business Source License 1.1')).toBe(true)
  })
})
