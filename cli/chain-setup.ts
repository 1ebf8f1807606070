import fs from 'node:fs/promises'
import path from 'node:path'
import { privateKeyToAccount } from 'viem/accounts'
import { CHAIN_IDS, contractsFor, toContracts } from '../chain/addresses.ts'
import { type ConsensusOrigin, DEVNET_CONSENSUS_FILE } from '../chain/beacon.ts'
import type { ChainClient } from '../chain/client.ts'
import { type CheckResult, type DoctorReport, runDoctorChecks } from '../chain/doctor.ts'
import {
  type DevnetImplementations,
  implementationsFromDevnet,
  type KnownImplementation,
} from '../chain/versions.ts'
import { decodedAddress } from '../common/address.ts'
import type { Config } from '../common/config.ts'
import { ConfigError } from '../common/errors.ts'
import type { Logger } from '../common/logger.ts'
import { DEVNET_FILE, type DevnetFile, type DevnetHandle } from '../devnet/index.ts'
import type { ChainSetup } from '../jobs/index.ts'

/** The chain setup of a devnet started in this process (its consensus figures: the devnet's facts file). */
export function setupFromDevnet(devnet: DevnetHandle): ChainSetup {
  return {
    chainId: devnet.chainId,
    rpcUrl: devnet.rpcUrl,
    contracts: toContracts({
      ...devnet.contracts,
      firewall: devnet.firewall,
      startBlock: devnet.deployBlock,
    }),
    allowerPrivateKey: devnet.allowerPrivateKey,
    consensus: { devnetFile: devnet.consensusFile },
  }
}

/**
 * Where the consensus job reads the exit queue's figures: the Beacon API at BEACON_URL, else, for CHAIN=devnet,
 * the devnet's facts file in DATA_DIR; none on mainnet or hoodi without BEACON_URL (the job is then not
 * registered and the API's exit queue answers 503 IR5031).
 *
 * @example
 * consensusOrigin({ beaconUrl: undefined, chain: 'devnet', dataDir: './data' }) // { devnetFile: 'data/devnet-consensus.json' }
 */
export function consensusOrigin(
  config: Pick<Config, 'beaconUrl' | 'chain' | 'dataDir'>,
): ConsensusOrigin | undefined {
  if (config.beaconUrl) return { beaconUrl: config.beaconUrl }
  if (config.chain === 'devnet') return { devnetFile: path.join(config.dataDir, DEVNET_CONSENSUS_FILE) }
  return undefined
}

/**
 * The chain setup from configuration: mainnet/hoodi addresses from chain/addresses (allower key from
 * ALLOWER_PRIVATE_KEY), or, for CHAIN=devnet with RPC_URL, the deploy described by `$DATA_DIR/devnet.json`
 * (written by `lsreport devnet`).
 */
export async function setupFromConfig(config: Config): Promise<ChainSetup> {
  if (!config.rpcUrl)
    throw new ConfigError('RPC_URL is not set: run `lsreport up` or `lsreport devnet` for a local chain')
  if (config.chain === 'devnet') {
    const file = path.join(config.dataDir, DEVNET_FILE)
    let devnet: DevnetFile
    try {
      devnet = JSON.parse(await fs.readFile(file, 'utf8')) as DevnetFile
    } catch (err) {
      throw new ConfigError(
        `CHAIN=devnet needs ${file} (written by \`lsreport devnet\`): ${(err as Error).message}`,
      )
    }
    return {
      chainId: devnet.chain_id,
      rpcUrl: config.rpcUrl,
      contracts: toContracts({
        ...devnet.contracts,
        firewall: devnet.firewall,
        startBlock: BigInt(devnet.deploy_block),
      }),
      allowerPrivateKey: config.allowerPrivateKey ?? devnet.allower.private_key,
      consensus: consensusOrigin(config),
    }
  }
  return {
    chainId: CHAIN_IDS[config.chain],
    rpcUrl: config.rpcUrl,
    contracts: contractsFor(config.chain),
    allowerPrivateKey: config.allowerPrivateKey,
    consensus: consensusOrigin(config),
  }
}

/** The implementations a devnet publishes in `$DATA_DIR/devnet.json` (`implementations`), if any. */
export async function devnetImplementations(dataDir: string): Promise<KnownImplementation[]> {
  try {
    const file = JSON.parse(await fs.readFile(path.join(dataDir, DEVNET_FILE), 'utf8')) as {
      implementations?: DevnetImplementations
    }
    return implementationsFromDevnet(file.implementations)
  } catch {
    return []
  }
}

/**
 * `lsreport doctor`'s checks (chain/doctor.ts) for a chain setup: chain id, archive reads, code, versions, the
 * allower, start blocks, latest report; each result goes to `onResult` as it completes.
 */
export async function doctorChain(
  config: Pick<Config, 'chain' | 'dataDir'>,
  setup: ChainSetup,
  client: ChainClient,
  onResult?: (result: CheckResult) => void,
  skip?: readonly string[],
): Promise<DoctorReport> {
  return runDoctorChecks(
    {
      skip,
      client,
      chain: config.chain,
      chainId: setup.chainId,
      contracts: setup.contracts,
      allower: setup.allowerPrivateKey
        ? decodedAddress(privateKeyToAccount(setup.allowerPrivateKey).address)
        : undefined,
      implementations: config.chain === 'devnet' ? await devnetImplementations(config.dataDir) : [],
    },
    onResult,
  )
}

/**
 * The doctor's checks at the start of `up`, `sync` and `worker`: each result logged (warnings as warnings), and
 * the first failure (a wrong chain id, a node without historical state, a contract without code) stops the
 * command with the check's message; `skip`: checks not run.
 */
export async function assertChainReady(
  config: Pick<Config, 'chain' | 'dataDir'>,
  setup: ChainSetup,
  client: ChainClient,
  logger: Logger,
  skip?: readonly string[],
): Promise<void> {
  const report = await doctorChain(
    config,
    setup,
    client,
    (r) => {
      const fields = { check: r.check, ...(r.details ?? {}) }
      if (r.status === 'ok') logger.info(fields, `chain check passed: ${r.message}`)
      else if (r.status === 'warn') logger.warn(fields, `chain check warned: ${r.message}`)
    },
    skip,
  )
  const failed = report.results.find((r) => r.status === 'fail')
  if (failed) throw new ConfigError(`chain check ${failed.check} failed: ${failed.message}`)
}
