import { getAddress } from 'viem'
import { describe, expect, test } from 'vitest'
import { ConfigError } from '../common/errors.ts'
import {
  CHAIN_IDS,
  type ChainContracts,
  contractsFor,
  type KnownChain,
  MAINNET_START_BLOCKS,
  toContracts,
} from './addresses.ts'

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
  test('behavior: mainnet has the five PROTOCOL.md proxies (in the stored form: lower case) and starts at the earliest deployment', () => {
    const mainnet = contractsFor('mainnet')
    expect(mainnet).toEqual({
      river: '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549',
      redeemManager: '0x080b3a41390b357ad7e8097644d1dedf57ad3375',
      allowlist: '0xebc83bb472b2816ec5b5de8d34f0efc9088bb2ce',
      oracle: '0x895a57ed71025d51fe4080530a3489d92e230683',
      operatorsRegistry: '0x1235f1b60df026b2620e48e735c422425e06b725',
      startBlock: 15_676_393n,
    })
    const starts = Object.values(MAINNET_START_BLOCKS)
    expect(starts).toContain(mainnet.startBlock)
    for (const start of starts) expect(mainnet.startBlock <= start).toBe(true)
  })

  test('behavior: hoodi has River, RedeemManager and Allowlist only', () => {
    const hoodi = contractsFor('hoodi')
    expect(hoodi.river).toBe('0x0ca0c58b1986a55876552e0d9532c963625d5646')
    expect(hoodi.redeemManager).toBe('0x5d51e82b75a4f16ef677d5be20d707b6441a00b7')
    expect(hoodi.allowlist).toBe('0x21504e21dd31ec7f778dfefc56a5dbaaa63e5bb4')
    expect(hoodi.oracle).toBeUndefined()
    expect(hoodi.operatorsRegistry).toBeUndefined()
    expect(CHAIN_IDS.hoodi).toBe(560048)
  })

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
    expect(contractsFor('mainnet').startBlock).toBe(15_676_393n)
    expect(() => contractsFor('sepolia' as KnownChain)).toThrow(ConfigError)
  })
})
