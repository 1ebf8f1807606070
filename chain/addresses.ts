import { type Address, toAddress } from '../common/address.ts'
import { ConfigError } from '../common/errors.ts'

/**
 * The protocol contracts the service reads on one chain, and the block to scan logs from. Mainnet and hoodi
 * come from PROTOCOL.md; a devnet builds this from its deploy at runtime.
 */
export interface ChainContracts {
  river: Address
  redeemManager: Address
  allowlist: Address
  oracle?: Address
  operatorsRegistry?: Address
  /** First block worth scanning: no event of these contracts lies before it. */
  startBlock: bigint
}

/** Chains with published contract addresses. */
export type KnownChain = 'mainnet' | 'hoodi'

/** Chain ids of the known chains. */
export const CHAIN_IDS: Record<KnownChain, number> = { mainnet: 1, hoodi: 560048 }

const CONTRACTS: Record<KnownChain, ContractAddresses> = {
  /** Ethereum mainnet proxies; the scan starts at the earliest deployment (River and Allowlist, 15676393). */
  mainnet: {
    river: '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549',
    redeemManager: '0x080b3a41390b357Ad7e8097644d1DEDf57AD3375',
    allowlist: '0xebc83Bb472b2816Ec5B5de8D34F0eFc9088BB2ce',
    oracle: '0x895a57eD71025D51fe4080530A3489D92E230683',
    operatorsRegistry: '0x1235f1b60df026B2620e48E735C422425E06b725',
    startBlock: 15_676_393n,
  },
  /**
   * Hoodi testnet. PROTOCOL.md publishes no deployment block there, so the scan starts at genesis: scanning
   * too early costs a few empty `eth_getLogs` ranges, scanning too late would lose events.
   */
  hoodi: {
    river: '0x0CA0c58b1986a55876552E0D9532C963625D5646',
    redeemManager: '0x5d51E82b75A4F16ef677d5bE20d707b6441A00b7',
    allowlist: '0x21504e21Dd31ec7f778DFeFc56A5DBaaa63E5BB4',
    startBlock: 0n,
  },
}

/**
 * Per-contract first blocks on mainnet (PROTOCOL.md), for cursors kept per contract.
 *
 * @example
 * MAINNET_START_BLOCKS.redeemManager // 17371894n
 */
export const MAINNET_START_BLOCKS = {
  river: 15_676_393n,
  redeemManager: 17_371_894n,
  allowlist: 15_676_393n,
  oracle: 15_676_406n,
  operatorsRegistry: 15_676_409n,
} as const

/**
 * The published contracts of a known chain (a fresh copy: callers may not mutate the table).
 *
 * @example
 * contractsFor('mainnet').river // '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549'
 */
export function contractsFor(chain: KnownChain): ChainContracts {
  const contracts = CONTRACTS[chain]
  if (!contracts)
    throw new ConfigError(`no published contracts for chain ${String(chain)}`, { details: { chain } })
  return toContracts(contracts)
}

/** Contract addresses as published or deployed (any valid case), with the block to scan from. */
export interface ContractAddresses {
  river: string
  redeemManager: string
  allowlist: string
  oracle?: string | undefined
  operatorsRegistry?: string | undefined
  startBlock: bigint
}

/**
 * Contract addresses where they enter (the published table, a devnet's deploy file) in the one stored form
 * (`common/address.ts`), so logs, cursors and stored rows compare them without lower-casing again.
 */
export function toContracts(raw: ContractAddresses): ChainContracts {
  return {
    river: toAddress(raw.river, 'river'),
    redeemManager: toAddress(raw.redeemManager, 'redeemManager'),
    allowlist: toAddress(raw.allowlist, 'allowlist'),
    ...(raw.oracle ? { oracle: toAddress(raw.oracle, 'oracle') } : {}),
    ...(raw.operatorsRegistry
      ? { operatorsRegistry: toAddress(raw.operatorsRegistry, 'operatorsRegistry') }
      : {}),
    startBlock: raw.startBlock,
  }
}
