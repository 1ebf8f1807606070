import fs from 'node:fs'
import path from 'node:path'
import { getAddress } from 'viem'
import { describe, expect, test } from 'vitest'
import { ConfigError } from '../common/errors.ts'
import type { ChainIndex } from '../fixtures/protocol/extract.ts'
import {
  CHAIN_IDS,
  type ChainContracts,
  contractsFor,
  type KnownChain,
  START_BLOCKS,
  toContracts,
} from './addresses.ts'

/** The protocol's deployment facts for a chain (fixtures/protocol/<chain>/index.json). */
function deployments(chain: KnownChain): ChainIndex {
  const file = path.resolve(import.meta.dirname, '../fixtures/protocol', chain, 'index.json')
  return JSON.parse(fs.readFileSync(file, 'utf8')) as ChainIndex
}

/** Our contract key -> the protocol's contract name. */
const NAMES = {
  river: 'River',
  redeemManager: 'RedeemManager',
  allowlist: 'Allowlist',
  oracle: 'Oracle',
  operatorsRegistry: 'OperatorsRegistry',
} as const

function addressesOf(contracts: ChainContracts): string[] {
  return [
    contracts.river,
    contracts.redeemManager,
    contracts.allowlist,
    contracts.oracle,
    contracts.operatorsRegistry,
  ].filter((a) => a !== undefined)
}

describe('contractsFor', () => {
  test('behavior: mainnet has the five PROTOCOL.md proxies, the firewall, the ETH / USD and EUR / USD feeds (in the stored form: lower case), each proxy from its deployment block', () => {
    const mainnet = contractsFor('mainnet')
    expect(mainnet).toEqual({
      river: '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549',
      redeemManager: '0x080b3a41390b357ad7e8097644d1dedf57ad3375',
      allowlist: '0xebc83bb472b2816ec5b5de8d34f0efc9088bb2ce',
      oracle: '0x895a57ed71025d51fe4080530a3489d92e230683',
      operatorsRegistry: '0x1235f1b60df026b2620e48e735c422425e06b725',
      firewall: '0xf1b958564edf538dda1302d3d81eb58ee204b87f',
      // Chainlink ETH / USD and EUR / USD: no ETH / EUR feed exists, ETH / EUR is derived (chain/addresses.ts)
      priceFeeds: {
        usd: '0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419',
        eurUsd: '0xb49f677943bc038e9857d61e7d053caa2c1734c1',
      },
      startBlocks: {
        river: 15_676_402n,
        redeemManager: 17_371_894n,
        allowlist: 15_676_397n,
        oracle: 15_676_406n,
        operatorsRegistry: 15_676_409n,
      },
      startBlock: 15_676_397n,
    })
  })

  test('behavior: hoodi is complete: five proxies, the firewall and their deployment blocks', () => {
    const hoodi = contractsFor('hoodi')
    expect(hoodi.river).toBe('0x0ca0c58b1986a55876552e0d9532c963625d5646')
    expect(hoodi.redeemManager).toBe('0x5d51e82b75a4f16ef677d5be20d707b6441a00b7')
    expect(hoodi.allowlist).toBe('0x21504e21dd31ec7f778dfefc56a5dbaaa63e5bb4')
    expect(hoodi.oracle).toBe('0xdb9c7257647169c8f48ddebb3b30b94e5df37f78')
    expect(hoodi.operatorsRegistry).toBe('0x08cc4d7ce071bb80eb30184da96692c312cfa904')
    expect(hoodi.firewall).toBe('0x77a6af070966d2668e0daee7354b3ec0dcfb100f')
    expect(hoodi.startBlock).toBe(307_746n)
    expect(CHAIN_IDS.hoodi).toBe(560048)
  })

  test.each(['mainnet', 'hoodi'] as const)(
    'behavior: the %s table equals the protocol deployment files (addresses, proxy blocks, firewall, chain id)',
    (chain) => {
      const facts = deployments(chain)
      const contracts = contractsFor(chain)
      expect(CHAIN_IDS[chain]).toBe(facts.chainId)
      for (const [key, name] of Object.entries(NAMES) as [keyof typeof NAMES, string][]) {
        const proxy = facts.contracts[name]!.proxy
        expect(contracts[key], `${chain} ${name}`).toBe(proxy.address.toLowerCase())
        expect(START_BLOCKS[chain][key], `${chain} ${name} start block`).toBe(BigInt(proxy.blockNumber))
        expect(contracts.startBlocks[key]).toBe(BigInt(proxy.blockNumber))
      }
      expect(contracts.firewall).toBe(facts.firewall.address.toLowerCase())
      const starts = Object.values(contracts.startBlocks) as bigint[]
      expect(starts).toContain(contracts.startBlock)
      for (const start of starts) expect(contracts.startBlock <= start).toBe(true)
    },
  )

  test('behavior: addresses are checked against their EIP-55 checksum where they enter; a wrong one is refused', () => {
    // the published table is mixed case: contractsFor checks each checksum as it normalizes
    for (const chain of ['mainnet', 'hoodi'] as const) {
      for (const address of addressesOf(contractsFor(chain))) expect(address).toBe(address.toLowerCase())
    }
    const good = { river: '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549', startBlock: 0n }
    const contracts = { ...good, redeemManager: good.river, allowlist: good.river }
    expect(toContracts(contracts).river).toBe(good.river.toLowerCase())
    expect(getAddress(good.river)).toBe(good.river)
    // one letter's case flipped: the checksum fails
    expect(() =>
      toContracts({ ...contracts, allowlist: '0x8C1BEd5b9a0928467c9B1341Da1D7BD5e10b6549' }),
    ).toThrow(/allowlist has mixed case that fails the EIP-55 checksum/)
  })

  test('behavior: returns a copy and rejects an unknown chain', () => {
    const a = contractsFor('mainnet')
    a.startBlock = 0n
    a.startBlocks.river = 0n
    expect(contractsFor('mainnet').startBlock).toBe(15_676_397n)
    expect(contractsFor('mainnet').startBlocks.river).toBe(15_676_402n)
    expect(START_BLOCKS.mainnet.river).toBe(15_676_402n)
    expect(() => contractsFor('sepolia' as KnownChain)).toThrow(ConfigError)
  })

  test('behavior: toContracts takes one start block for all, per-contract blocks, or both; startBlock is the minimum', () => {
    const river = '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549'
    const base = { river, redeemManager: river, allowlist: river }
    const one = toContracts({ ...base, oracle: river, startBlock: 7n })
    expect(one.startBlocks).toEqual({ river: 7n, redeemManager: 7n, allowlist: 7n, oracle: 7n })
    expect(one.startBlock).toBe(7n)
    expect(one.firewall).toBeUndefined()
    const mixed = toContracts({ ...base, startBlock: 9n, startBlocks: { river: 5n, redeemManager: 20n } })
    expect(mixed.startBlocks).toEqual({ river: 5n, redeemManager: 20n, allowlist: 9n })
    expect(mixed.startBlock).toBe(5n)
    expect(() => toContracts({ ...base, startBlocks: { river: 1n } })).toThrow(
      /no start block for redeemManager/,
    )
  })

  test('behavior: EUR comes from a direct ETH / EUR feed or a EUR / USD feed (derived), never both', () => {
    const river = '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549'
    const base = { river, redeemManager: river, allowlist: river, startBlock: 1n }
    const feed = '0xb49f677943BC038e9857d61E7d053CaA2C1734C1'
    expect(toContracts({ ...base, priceFeeds: { usd: river, eurUsd: feed } }).priceFeeds).toEqual({
      usd: river.toLowerCase(),
      eurUsd: feed.toLowerCase(),
    })
    expect(toContracts({ ...base, priceFeeds: { eur: feed } }).priceFeeds).toEqual({
      eur: feed.toLowerCase(),
    })
    expect(() => toContracts({ ...base, priceFeeds: { usd: river, eur: feed, eurUsd: feed } })).toThrow(
      ConfigError,
    )
    // the checksum is checked on the new key too
    expect(() =>
      toContracts({ ...base, priceFeeds: { eurUsd: '0xB49f677943BC038e9857d61E7d053CaA2C1734C1' } }),
    ).toThrow(/priceFeeds.eurUsd has mixed case/)
  })
})
