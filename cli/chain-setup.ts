import fs from 'node:fs/promises'
import path from 'node:path'
import { CHAIN_IDS, contractsFor, toContracts } from '../chain/addresses.ts'
import type { Config } from '../common/config.ts'
import { ConfigError } from '../common/errors.ts'
import { DEVNET_FILE, type DevnetFile, type DevnetHandle } from '../devnet/index.ts'
import type { ChainSetup } from '../jobs/index.ts'

/** The chain setup of a devnet started in this process. */
export function setupFromDevnet(devnet: DevnetHandle): ChainSetup {
  return {
    chainId: devnet.chainId,
    rpcUrl: devnet.rpcUrl,
    contracts: toContracts({ ...devnet.contracts, startBlock: devnet.deployBlock }),
    allowerPrivateKey: devnet.allowerPrivateKey,
  }
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
      contracts: toContracts({ ...devnet.contracts, startBlock: BigInt(devnet.deploy_block) }),
      allowerPrivateKey: config.allowerPrivateKey ?? devnet.allower.private_key,
    }
  }
  return {
    chainId: CHAIN_IDS[config.chain],
    rpcUrl: config.rpcUrl,
    contracts: contractsFor(config.chain),
    allowerPrivateKey: config.allowerPrivateKey,
  }
}
