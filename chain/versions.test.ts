import fs from 'node:fs'
import path from 'node:path'
import type { Hex } from 'viem'
import { describe, expect, test } from 'vitest'
import type { Address } from '../common/address.ts'
import type { ChainIndex } from '../fixtures/protocol/extract.ts'
import { EIP1967_IMPLEMENTATION_SLOT } from './abi.ts'
import { IMPLEMENTATIONS, implementationAt, implementationsFromDevnet, knownVersion } from './versions.ts'

function deployments(chain: 'mainnet' | 'hoodi'): ChainIndex {
  const file = path.resolve(import.meta.dirname, '../fixtures/protocol', chain, 'index.json')
  return JSON.parse(fs.readFileSync(file, 'utf8')) as ChainIndex
}

describe('IMPLEMENTATIONS', () => {
  test.each(['mainnet', 'hoodi'] as const)(
    'behavior: the %s table equals the implementations of the protocol deployment files',
    (chain) => {
      const facts = deployments(chain)
      const expected = Object.entries(facts.contracts).flatMap(([contract, entry]) =>
        entry.implementations.map((i) => ({
          contract,
          version: i.version,
          address: i.address.toLowerCase(),
          block: BigInt(i.blockNumber),
        })),
      )
      const key = (i: { address: string }) => i.address
      expect(
        [...(IMPLEMENTATIONS[facts.chainId] ?? [])].sort((a, b) => key(a).localeCompare(key(b))),
      ).toEqual(expected.sort((a, b) => key(a).localeCompare(key(b))))
    },
  )
})

describe('knownVersion', () => {
  test('behavior: maps a mainnet or hoodi implementation address, in any case, to its contract and version', () => {
    expect(knownVersion(1, '0x34E4617764cc94620170aA0e6652AD328D196D58')).toMatchObject({
      contract: 'River',
      version: '1.2.1',
    })
    expect(knownVersion(1, '0x72662e4da74278430123ce51405c1e7a1b87c294')).toMatchObject({
      contract: 'OperatorsRegistry',
      version: '1.0.1',
    })
    expect(knownVersion(560048, '0x770604A7c8423d82a28c52F7ba77f981E7302AAC')).toMatchObject({
      contract: 'RedeemManager',
      version: '1.2.1',
    })
  })

  test('behavior: an address of another chain, or unknown, is undefined', () => {
    expect(knownVersion(560048, '0x34E4617764cc94620170aA0e6652AD328D196D58')).toBeUndefined()
    expect(knownVersion(31337, '0x34E4617764cc94620170aA0e6652AD328D196D58')).toBeUndefined()
    expect(knownVersion(1, '0x000000000000000000000000000000000000dEaD')).toBeUndefined()
  })

  test('behavior: a devnet history (devnet.json implementations) extends the table', () => {
    const extra = implementationsFromDevnet({
      river: [
        { version: '1.0.0', address: '0x5FbDB2315678afecb367f032d93F642f64180aa3', block: 3 },
        { version: '1.2.1', address: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512', block: '40' },
      ],
      allowlist: [{ version: '1.2.1', address: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0', block: null }],
    })
    expect(extra.map((e) => [e.contract, e.version, e.block])).toEqual([
      ['River', '1.0.0', 3n],
      ['River', '1.2.1', 40n],
      ['Allowlist', '1.2.1', null],
    ])
    expect(knownVersion(31337, '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512', extra)).toMatchObject({
      contract: 'River',
      version: '1.2.1',
    })
    expect(implementationsFromDevnet(undefined)).toEqual([])
  })
})

describe('implementationAt', () => {
  const proxy = '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549' as Address

  function reader(word: Hex | undefined) {
    const calls: unknown[] = []
    return {
      calls,
      async getStorageAt(args: { address: Address; slot: Hex; blockNumber?: bigint }) {
        calls.push(args)
        return word
      },
    }
  }

  test('behavior: reads the EIP-1967 slot (at a block when given) and returns the address in the stored form', async () => {
    const client = reader('0x00000000000000000000000034e4617764cc94620170aa0e6652ad328d196d58')
    expect(await implementationAt(client, proxy, 21_128_400n)).toBe(
      '0x34e4617764cc94620170aa0e6652ad328d196d58',
    )
    expect(client.calls).toEqual([
      { address: proxy, slot: EIP1967_IMPLEMENTATION_SLOT, blockNumber: 21_128_400n },
    ])
    await implementationAt(client, proxy)
    expect(client.calls[1]).toEqual({ address: proxy, slot: EIP1967_IMPLEMENTATION_SLOT })
  })

  test('behavior: an empty slot (not a proxy) is null', async () => {
    expect(await implementationAt(reader(`0x${'0'.repeat(64)}`), proxy)).toBeNull()
    expect(await implementationAt(reader('0x'), proxy)).toBeNull()
    expect(await implementationAt(reader(undefined), proxy)).toBeNull()
  })
})
