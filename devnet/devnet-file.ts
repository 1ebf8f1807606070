/**
 * `$DATA_DIR/devnet.json`: what the service reads of a running devnet (its RPC URL, chain id, the contracts it
 * reads, the allowlist writer's key, the implementations over the history, the simulator's calendar), written
 * by `launchDevnet` and again as upgrades are mined.
 */
import { renameSync, writeFileSync } from 'node:fs'
import type { Address, Hex } from 'viem'
import { devAccount } from './accounts.ts'
import type { DevnetContracts, DevnetDeployment } from './deployment.ts'
import { DAY_SECONDS, type Timeline } from './timeline.ts'
import {
  type HistoryKind,
  type ImplementationRecord,
  PROXIED_CONTRACTS,
  type ProtocolVersion,
  type ProxiedContract,
} from './versions.ts'

/** devnet.json's name in the data directory. */
export const DEVNET_FILE = 'devnet.json'

/** The consensus facts file's name in the data directory (the consensus job reads it on the devnet). */
export const CONSENSUS_FILE = 'devnet-consensus.json'

/** One entry of devnet.json's `implementations` (block null: the upgrade is planned, not mined yet). */
export interface ImplementationEntry {
  version: ProtocolVersion
  address: Address
  block: number | null
}

/**
 * The devnet's price feeds (PriceFeed.sol, Chainlink-shaped): ETH / USD, and EUR / USD from which the service
 * derives ETH / EUR (chain/addresses.ts `PriceFeeds`).
 */
export interface DevnetPriceFeeds {
  usd: Address
  eurUsd: Address
}

/** The five contracts the service reads, and the ETH price feeds it reads at each report. */
export type ServiceContracts = Pick<
  DevnetContracts,
  'river' | 'redeemManager' | 'allowlist' | 'oracle' | 'operatorsRegistry'
> & {
  priceFeeds: DevnetPriceFeeds
}

/** The content of `$DATA_DIR/devnet.json`. */
export interface DevnetFile {
  rpc_url: string
  chain_id: number
  contracts: {
    river: Address
    redeemManager: Address
    allowlist: Address
    oracle: Address
    operatorsRegistry: Address
    /**
     * the devnet's ETH / USD and EUR / USD PriceFeeds (absent from a devnet.json written before them; one
     * written before EUR / USD names an ETH / EUR feed as `eur`, still read as such)
     */
    priceFeeds?: DevnetPriceFeeds | { usd: Address; eur: Address }
  }
  allower: { address: Address; private_key: Hex }
  /** the AllowlistFirewall (the Allowlist's allower; `allower` is its executor) */
  firewall: Address
  /** `current` or `versioned` (see StartDevnetOptions.history) */
  history: HistoryKind
  /** per proxy, its implementations oldest first (rewritten as upgrades are mined) */
  implementations: Record<ProxiedContract, ImplementationEntry[]>
  simulator: {
    day_seconds: number
    first_report_date: string
    report_time_utc: string
    seed: number | string
    wallet_count: number
    day_interval_ms: number
    consensus_file: string
  }
  deploy_block: number
  /** a few LsETH holders: wallets allowlisted before the first day, holding LsETH from the first report */
  holders: Address[]
}

/** devnet.json's form of the implementation records (block numbers as numbers). */
function implementationEntries(
  records: Record<ProxiedContract, ImplementationRecord[]>,
): Record<ProxiedContract, ImplementationEntry[]> {
  const entries = {} as Record<ProxiedContract, ImplementationEntry[]>
  for (const contract of PROXIED_CONTRACTS) {
    entries[contract] = records[contract].map((r) => ({
      version: r.version,
      address: r.address,
      block: r.block === null ? null : Number(r.block),
    }))
  }
  return entries
}

/**
 * The contracts of a deployment the service reads.
 *
 * @example
 * serviceContracts(deployment).priceFeeds.usd // '0x5FbD...'
 */
export function serviceContracts(deployment: DevnetDeployment): ServiceContracts {
  const { river, redeemManager, allowlist, oracle, operatorsRegistry } = deployment.contracts
  const priceFeeds = { usd: deployment.contracts.usdPriceFeed, eurUsd: deployment.contracts.eurPriceFeed }
  return { river, redeemManager, allowlist, oracle, operatorsRegistry, priceFeeds }
}

/**
 * devnet.json's content for a deployment served at `rpcUrl` (`holders`: a few initial LsETH holders).
 *
 * @example
 * const file = devnetFileContent({ rpcUrl, chainId: 31337, deployment, history: 'versioned', timeline, ... })
 */
export function devnetFileContent(devnet: {
  rpcUrl: string
  chainId: number
  deployment: DevnetDeployment
  history: HistoryKind
  timeline: Timeline
  seed: number | string
  walletCount: number
  dayIntervalMs: number
  holders: Address[]
}): DevnetFile {
  const { deployment, timeline } = devnet
  const allower = devAccount('allower')
  return {
    rpc_url: devnet.rpcUrl,
    chain_id: devnet.chainId,
    contracts: serviceContracts(deployment),
    allower: { address: allower.address, private_key: allower.privateKey },
    firewall: deployment.contracts.firewall,
    history: devnet.history,
    implementations: implementationEntries(deployment.implementations),
    simulator: {
      day_seconds: DAY_SECONDS,
      first_report_date: timeline.firstReportDate,
      report_time_utc: new Date(timeline.reportSecondOfDay * 1000).toISOString().slice(11, 19),
      seed: devnet.seed,
      wallet_count: devnet.walletCount,
      day_interval_ms: devnet.dayIntervalMs,
      consensus_file: CONSENSUS_FILE,
    },
    deploy_block: Number(deployment.deployBlock),
    holders: devnet.holders,
  }
}

/**
 * Writes `file` to `target` (through a temporary file), its implementations taken anew from the deployment's
 * records (updated as upgrades are mined).
 *
 * @example
 * writeDevnetFile('data/devnet.json', file, deployment.implementations)
 */
export function writeDevnetFile(
  target: string,
  file: DevnetFile,
  implementations: Record<ProxiedContract, ImplementationRecord[]>,
): void {
  file.implementations = implementationEntries(implementations)
  writeFileSync(`${target}.tmp`, `${JSON.stringify(file, null, 2)}\n`)
  renameSync(`${target}.tmp`, target)
}
