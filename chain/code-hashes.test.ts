import { type Hex, keccak256 } from 'viem'
import { describe, expect, test } from 'vitest'
import type { BytecodeIndex } from '../fixtures/protocol/extract.ts'
import {
  PROTOCOL_CHAINS,
  readProtocolFixture,
  runtimeCodeOf as runtimeOf,
} from '../test/helpers/protocol-bytecode.ts'
import { codeName, identifyCode, KNOWN_CODES, maskImmutables } from './code-hashes.ts'

describe('KNOWN_CODES', () => {
  test('behavior: equals the runtime codes of both chains’ bytecode fixtures, one row per distinct hash', () => {
    const expected = new Map<string, Record<string, unknown>>()
    for (const chain of PROTOCOL_CHAINS) {
      for (const entry of Object.values(
        readProtocolFixture<BytecodeIndex>(chain, 'bytecode', 'index.json').artifacts,
      )) {
        const row = expected.get(entry.runtimeCodeHash)
        if (row) {
          expect([row.contract, row.version]).toEqual([entry.contract, entry.version])
          ;(row.chains as string[]).push(chain)
          continue
        }
        expected.set(entry.runtimeCodeHash, {
          kind:
            entry.version === null
              ? entry.contract === 'TUPProxy'
                ? 'proxy'
                : 'firewall'
              : 'implementation',
          contract: entry.contract,
          version: entry.version,
          hash: entry.runtimeCodeHash,
          size: entry.runtimeCodeSize,
          chains: [chain],
        })
      }
    }
    expect(KNOWN_CODES.map(({ immutables: _, ...row }) => row)).toEqual([...expected.values()])
    // mainnet's and Hoodi's River 1.2.1 are different builds: both named 1.2.1
    expect(KNOWN_CODES.filter((c) => c.contract === 'River' && c.version === '1.2.1')).toHaveLength(2)
  })

  test('behavior: only Hoodi’s Firewall holds immutables, at PUSH32 words', () => {
    expect(KNOWN_CODES.filter((c) => c.immutables.length).map((c) => [c.contract, c.chains])).toEqual([
      ['Firewall', ['hoodi']],
    ])
    const firewall = runtimeOf('hoodi', 'Firewall')
    for (const offset of KNOWN_CODES.find((c) => c.immutables.length)!.immutables) {
      // the opcode before the word is PUSH32, and the deployments file's word is zero
      expect(firewall.slice(2 + (offset - 1) * 2, 2 + (offset + 32) * 2)).toBe(`7f${'0'.repeat(64)}`)
    }
  })
})

describe('identifyCode', () => {
  test('behavior: names an implementation by its runtime code, mainnet’s and Hoodi’s builds alike', () => {
    const mainnet = identifyCode(runtimeOf('mainnet', 'RiverV1_Implementation_1_2_1'))
    const hoodi = identifyCode(runtimeOf('hoodi', 'RiverV1_Implementation_1_2_1'))
    expect(mainnet.known).toMatchObject({ kind: 'implementation', contract: 'River', version: '1.2.1' })
    expect(hoodi.known).toMatchObject({ contract: 'River', version: '1.2.1', chains: ['hoodi'] })
    expect(mainnet.hash).not.toBe(hoodi.hash)
    expect(codeName(mainnet.known!)).toBe('River 1.2.1')
    expect(
      identifyCode(runtimeOf('mainnet', 'OperatorsRegistryV1_Implementation_0_4_0')).known,
    ).toMatchObject({
      contract: 'OperatorsRegistry',
      version: '0.4.0',
    })
  })

  test('behavior: a Hoodi firewall with its destination filled is the Firewall, its hash the masked one', () => {
    const zeroed = runtimeOf('hoodi', 'Firewall')
    const table = KNOWN_CODES.find((c) => c.contract === 'Firewall' && c.chains.includes('hoodi'))!
    let deployed = zeroed.slice(2)
    const word = `000000000000000000000000${'f733b0ecf2141db2956d8ea9ab98e5cc33ca2f80'}`
    for (const offset of table.immutables) {
      deployed = deployed.slice(0, offset * 2) + word + deployed.slice((offset + 32) * 2)
    }
    const found = identifyCode(`0x${deployed}`)
    expect(found).toEqual({ hash: table.hash, size: 1625, known: table })
    expect(codeName(table)).toBe('the Firewall')
    // another word changed as well: not the Firewall
    expect(identifyCode(`0x${deployed.slice(0, -2)}00`).known).toBeUndefined()
  })

  test('behavior: any other code, or none, is unknown with its own hash', () => {
    expect(identifyCode('0x6080')).toEqual({ hash: keccak256('0x6080'), size: 2, known: undefined })
    expect(identifyCode(undefined)).toMatchObject({ size: 0, known: undefined })
    // the right size but another code
    expect(identifyCode(`0x${'00'.repeat(22752)}`).known).toBeUndefined()
  })
})

describe('maskImmutables', () => {
  test('behavior: zeroes the 32-byte word at each offset and nothing else; a word past the end throws', () => {
    const code = `0x7f${'ab'.repeat(32)}60${'cd'.repeat(33)}` as Hex
    expect(maskImmutables(code, [1])).toBe(`0x7f${'00'.repeat(32)}60${'cd'.repeat(33)}`)
    expect(maskImmutables(code, [1, 34])).toBe(`0x7f${'00'.repeat(32)}60${'00'.repeat(32)}cd`)
    expect(() => maskImmutables(code, [36])).toThrow(RangeError)
  })
})
