import { getAddress } from 'viem'
import { describe, expect, test } from 'vitest'
import { ConfigError } from '../common/errors.ts'
import {
  CHAIN_IDS,
  type ChainContracts,
  contractsFor,
  type KnownChain,
  MAINNET_START_BLOCKS,
} from './addresses.ts'

function addressesOf(contracts: ChainContracts): string[] {
  return [
    contracts.river,
    contracts.redeemManager,
    contracts.allowlist,
    contracts.oracle,
    contracts.operatorsRegistry,
  ].filter((a): a is `0x${string}` => a !== undefined)
}

describe('contractsFor', () => {
  test('behavior: mainnet has the five PROTOCOL.md proxies and starts at the earliest deployment', () => {
    const mainnet = contractsFor('mainnet')
    expect(mainnet).toEqual({
      river: '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549',
      redeemManager: '0x080b3a41390b357Ad7e8097644d1DEDf57AD3375',
      allowlist: '0xebc83Bb472b2816Ec5B5de8D34F0eFc9088BB2ce',
      oracle: '0x895a57eD71025D51fe4080530A3489D92E230683',
      operatorsRegistry: '0x1235f1b60df026B2620e48E735C422425E06b725',
      startBlock: 15_676_393n,
    })
    const starts = Object.values(MAINNET_START_BLOCKS)
    expect(starts).toContain(mainnet.startBlock)
    for (const start of starts) expect(mainnet.startBlock <= start).toBe(true)
  })

  test('behavior: hoodi has River, RedeemManager and Allowlist only', () => {
    const hoodi = contractsFor('hoodi')
    expect(hoodi.river).toBe('0x0CA0c58b1986a55876552E0D9532C963625D5646')
    expect(hoodi.redeemManager).toBe('0x5d51E82b75A4F16ef677d5bE20d707b6441A00b7')
    expect(hoodi.allowlist).toBe('0x21504e21Dd31ec7f778DFeFc56A5DBaaa63E5BB4')
    expect(hoodi.oracle).toBeUndefined()
    expect(hoodi.operatorsRegistry).toBeUndefined()
    expect(CHAIN_IDS.hoodi).toBe(560048)
  })

  test('behavior: every published address carries a valid EIP-55 checksum', () => {
    for (const chain of ['mainnet', 'hoodi'] as const) {
      for (const address of addressesOf(contractsFor(chain))) expect(getAddress(address)).toBe(address)
    }
  })

  test('behavior: returns a copy and rejects an unknown chain', () => {
    const a = contractsFor('mainnet')
    a.startBlock = 0n
    expect(contractsFor('mainnet').startBlock).toBe(15_676_393n)
    expect(() => contractsFor('sepolia' as KnownChain)).toThrow(ConfigError)
  })
})
