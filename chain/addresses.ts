import { type Address, toAddress } from '../common/address.ts'
import { ConfigError } from '../common/errors.ts'

/** The contracts whose logs the service scans, each from its own first block. */
export interface StartBlocks {
  river: bigint
  redeemManager: bigint
  allowlist: bigint
  oracle?: bigint
  operatorsRegistry?: bigint
}

/**
 * The Chainlink-shaped (AggregatorV3) feeds of ETH's price in each fiat currency on one chain
 * (chain/price-feeds.ts reads them at every report's block). A currency without a feed stores a missing price.
 * EUR comes from one of two sources, never both: `eur`, a direct ETH / EUR feed, or `eurUsd`, a EUR / USD feed
 * (EUR's price in USD) from which ETH / EUR is derived as ETH / USD / EUR / USD (`usd` is then needed too).
 */
export interface PriceFeeds {
  usd?: Address
  /** a direct ETH / EUR feed (description "ETH / EUR") */
  eur?: Address
  /** a EUR / USD feed (description "EUR / USD"): ETH / EUR derived from it and `usd` */
  eurUsd?: Address
}

/**
 * The protocol contracts the service reads on one chain, and the blocks to scan logs from. Mainnet and hoodi
 * come from the protocol's deployment files (fixtures/protocol); a devnet builds this from its deploy at runtime.
 */
export interface ChainContracts {
  river: Address
  redeemManager: Address
  allowlist: Address
  oracle?: Address
  operatorsRegistry?: Address
  /** The AllowlistFirewall, when the Allowlist's allower is one (writes go through it). */
  firewall?: Address
  /** ETH price feeds (not protocol contracts: no logs are scanned from them). */
  priceFeeds?: PriceFeeds
  /** First block of each contract: the block its proxy was deployed in (no event of it lies before). */
  startBlocks: StartBlocks
  /** First block worth scanning: the smallest of `startBlocks`. */
  startBlock: bigint
}

/** Chains with published contract addresses. */
export type KnownChain = 'mainnet' | 'hoodi'

/** Chain ids of the known chains. */
export const CHAIN_IDS: Record<KnownChain, number> = { mainnet: 1, hoodi: 560048 }

/**
 * Per-contract first blocks of the known chains: the block of each proxy's deployment receipt in the
 * protocol's `deployments/<chain>/<Name>_Proxy.json` (fixtures/protocol/<chain>/index.json).
 *
 * @example
 * START_BLOCKS.mainnet.redeemManager // 17371894n
 */
export const START_BLOCKS: Record<KnownChain, Required<StartBlocks>> = {
  mainnet: {
    river: 15_676_402n,
    redeemManager: 17_371_894n,
    allowlist: 15_676_397n,
    oracle: 15_676_406n,
    operatorsRegistry: 15_676_409n,
  },
  hoodi: {
    river: 307_755n,
    redeemManager: 307_784n,
    allowlist: 307_746n,
    oracle: 307_765n,
    operatorsRegistry: 307_773n,
  },
}

const CONTRACTS: Record<KnownChain, ContractAddresses> = {
  /** Ethereum mainnet proxies (PROTOCOL.md) and the AllowlistFirewall, the Allowlist's allower and admin. */
  mainnet: {
    river: '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549',
    redeemManager: '0x080b3a41390b357Ad7e8097644d1DEDf57AD3375',
    allowlist: '0xebc83Bb472b2816Ec5B5de8D34F0eFc9088BB2ce',
    oracle: '0x895a57eD71025D51fe4080530A3489D92E230683',
    operatorsRegistry: '0x1235f1b60df026B2620e48E735C422425E06b725',
    firewall: '0xF1b958564edF538dDa1302D3D81eB58eE204B87F',
    priceFeeds: {
      // Chainlink ETH / USD (EACAggregatorProxy, 8 decimals), docs.chain.link/data-feeds/price-feeds/addresses
      usd: '0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419',
      // No mainnet ETH / EUR feed exists: ETH / EUR is derived from ETH / USD and Chainlink's EUR / USD
      // (EACAggregatorProxy, 8 decimals, description "EUR / USD", ~1.08). So named in Synthetix's ExchangeRates
      // set-up ("EUR"), in a mainnet currency-aggregator table beside this ETH / USD feed, in DODO's EUR / USD
      // oracle (latestAnswer() / 100: 8 -> 6 decimals) and in ETH / EUR oracles built as ETH / USD / EUR / USD
      // (checked with the search tools, 2026-11). The reader refuses it if description() is not "EUR / USD".
      eurUsd: '0xb49f677943BC038e9857d61E7d053CaA2C1734C1',
    },
    startBlocks: START_BLOCKS.mainnet,
  },
  /** Hoodi testnet proxies and AllowlistFirewall (deployments/hoodi). */
  hoodi: {
    river: '0x0CA0c58b1986a55876552E0D9532C963625D5646',
    redeemManager: '0x5d51E82b75A4F16ef677d5bE20d707b6441A00b7',
    allowlist: '0x21504e21Dd31ec7f778DFeFc56A5DBaaa63E5BB4',
    oracle: '0xDb9C7257647169c8F48ddEbB3b30b94e5DF37f78',
    operatorsRegistry: '0x08CC4d7cE071BB80EB30184da96692C312Cfa904',
    firewall: '0x77a6Af070966D2668e0dAEe7354b3EC0dcFb100F',
    // Hoodi has no Chainlink feeds: every price is missing ('no ETH/USD feed is configured for chain 560048')
    startBlocks: START_BLOCKS.hoodi,
  },
}

/**
 * The published contracts of a known chain (a fresh copy: callers may not mutate the table).
 *
 * @example
 * contractsFor('mainnet').river // '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549'
 * contractsFor('mainnet').startBlock // 15676397n (the Allowlist proxy, the earliest of the five)
 */
export function contractsFor(chain: KnownChain): ChainContracts {
  const contracts = CONTRACTS[chain]
  if (!contracts)
    throw new ConfigError(`no published contracts for chain ${String(chain)}`, { details: { chain } })
  return toContracts(contracts)
}

/**
 * Contract addresses as published or deployed (any valid case), with the blocks to scan from: one
 * `startBlock` for all (a devnet's deploy block), per-contract `startBlocks`, or both (`startBlocks` entries
 * win; a contract without one starts at `startBlock`).
 */
export interface ContractAddresses {
  river: string
  redeemManager: string
  allowlist: string
  oracle?: string | undefined
  operatorsRegistry?: string | undefined
  firewall?: string | undefined
  /** ETH price feeds (a devnet's are its deployment's PriceFeed contracts); `eur` or `eurUsd`, not both */
  priceFeeds?: { usd?: string | undefined; eur?: string | undefined; eurUsd?: string | undefined } | undefined
  startBlock?: bigint | undefined
  startBlocks?: Partial<StartBlocks> | undefined
}

/**
 * Contract addresses where they enter (the published table, a devnet's deploy file) in the one stored form
 * (`common/address.ts`), so logs, cursors and stored rows compare them without lower-casing again.
 *
 * @example
 * toContracts({ river, redeemManager, allowlist, startBlock: 12n }).startBlocks.river // 12n
 */
export function toContracts(raw: ContractAddresses): ChainContracts {
  const blockOf = (name: keyof StartBlocks): bigint => {
    const block = raw.startBlocks?.[name] ?? raw.startBlock
    if (block === undefined)
      throw new ConfigError(`no start block for ${name}: give startBlock or startBlocks.${name}`)
    return block
  }
  const startBlocks: StartBlocks = {
    river: blockOf('river'),
    redeemManager: blockOf('redeemManager'),
    allowlist: blockOf('allowlist'),
    ...(raw.oracle ? { oracle: blockOf('oracle') } : {}),
    ...(raw.operatorsRegistry ? { operatorsRegistry: blockOf('operatorsRegistry') } : {}),
  }
  let startBlock = startBlocks.river
  for (const block of Object.values(startBlocks) as bigint[]) if (block < startBlock) startBlock = block
  return {
    river: toAddress(raw.river, 'river'),
    redeemManager: toAddress(raw.redeemManager, 'redeemManager'),
    allowlist: toAddress(raw.allowlist, 'allowlist'),
    ...(raw.oracle ? { oracle: toAddress(raw.oracle, 'oracle') } : {}),
    ...(raw.operatorsRegistry
      ? { operatorsRegistry: toAddress(raw.operatorsRegistry, 'operatorsRegistry') }
      : {}),
    ...(raw.firewall ? { firewall: toAddress(raw.firewall, 'firewall') } : {}),
    ...(raw.priceFeeds ? { priceFeeds: toPriceFeeds(raw.priceFeeds) } : {}),
    startBlocks,
    startBlock,
  }
}

/**
 * The configured price feeds in the stored address form (currencies without one left out). A direct ETH / EUR
 * feed and a EUR / USD feed together are refused: which one a EUR price came from would depend on the code.
 */
function toPriceFeeds(raw: NonNullable<ContractAddresses['priceFeeds']>): PriceFeeds {
  if (raw.eur && raw.eurUsd)
    throw new ConfigError(
      'priceFeeds: give eur (an ETH / EUR feed) or eurUsd (a EUR / USD feed, ETH / EUR derived), not both',
      { details: { eur: raw.eur, eurUsd: raw.eurUsd } },
    )
  return {
    ...(raw.usd ? { usd: toAddress(raw.usd, 'priceFeeds.usd') } : {}),
    ...(raw.eur ? { eur: toAddress(raw.eur, 'priceFeeds.eur') } : {}),
    ...(raw.eurUsd ? { eurUsd: toAddress(raw.eurUsd, 'priceFeeds.eurUsd') } : {}),
  }
}
