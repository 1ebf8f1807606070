/**
 * A seeded history on the protocol's own bytecode for the devnet's unit tests, deployed as `launchDevnet`
 * deploys it (index.ts): a fresh anvil at the timeline's genesis, `deployProtocolDevnet` (three oracle members
 * with a quorum of two, mainnet's report bounds, the releases on their days or, for a `current` history, in the
 * deploy block), then `createSimulator` over it. No RPC gate and no devnet.json: a test reads the chain after
 * the simulator has mined. (The hand-driven `startTestChain` takes one oracle vote and wide bounds instead,
 * which the simulator's reports do not expect.)
 */
import type { Log, PublicClient, TestClient } from 'viem'
import { type Anvil, startAnvil } from './anvil.ts'
import { createDevnetClients, DEVNET_ANVIL_ARGS } from './blocks.ts'
import { type DevnetDeployment, implementationVersionAt } from './deployment.ts'
import { deployProtocolDevnet } from './protocol-deploy.ts'
import { type CreateSimulatorOptions, createSimulator, type Simulator } from './simulator.ts'
import { createTimeline } from './timeline.ts'
import {
  type HistoryKind,
  type ProtocolVersion,
  type ProxiedContract,
  type UpgradeDays,
  versionPlan,
} from './versions.ts'

/** A protocol deployment with its simulator on a fresh anvil. */
export interface ProtocolHistory {
  anvil: Anvil
  publicClient: PublicClient
  testClient: TestClient
  deployment: DevnetDeployment
  simulator: Simulator
  /** The version a proxy points at (its EIP-1967 slot, mapped through the deployment's implementations). */
  versionOf(contract: ProxiedContract, blockNumber?: bigint): Promise<ProtocolVersion>
  /** Every log of the chain so far. */
  logs(): Promise<Log[]>
  /** Stops the simulator and anvil. */
  stop(): Promise<void>
}

/** Options of a protocol history: the history kind and release days, and the simulator's own options. */
export type ProtocolHistoryOptions = Omit<
  CreateSimulatorOptions,
  'publicClient' | 'testClient' | 'deployment'
> & {
  /** `current` (default): every release in the deploy block; `versioned`: on the `upgrades` days */
  history?: HistoryKind
  upgrades?: UpgradeDays
}

/**
 * Deploys the protocol's code on a fresh anvil as the devnet does and creates its simulator (no day run yet).
 *
 * @example
 * const run = await startProtocolHistory({ seed: 1, walletCount: 30, startDate: '2026-04-01' })
 * try { await run.simulator.runDays(6) } finally { await run.stop() }
 */
export async function startProtocolHistory(options: ProtocolHistoryOptions): Promise<ProtocolHistory> {
  const { history = 'current', upgrades, ...simulatorOptions } = options
  const timeline = createTimeline(options.startDate, options.reportSecondOfDay)
  const anvil = await startAnvil({ timestamp: timeline.genesisTimestamp, args: DEVNET_ANVIL_ARGS })
  try {
    const { publicClient, testClient } = createDevnetClients(anvil.rpcUrl)
    const deployment = await deployProtocolDevnet({
      publicClient,
      testClient,
      timestamp: timeline.genesisTimestamp + 12n,
      plan: versionPlan(history, upgrades),
      releaseDays: { ...upgrades },
    })
    const simulator = await createSimulator({ ...simulatorOptions, publicClient, testClient, deployment })
    return {
      anvil,
      publicClient,
      testClient,
      deployment,
      simulator,
      versionOf: (contract, blockNumber) =>
        implementationVersionAt(publicClient, deployment, contract, blockNumber),
      logs: () => publicClient.getLogs({ fromBlock: 0n, toBlock: 'latest' }) as Promise<Log[]>,
      async stop() {
        await simulator.stop().catch(() => undefined)
        await anvil.stop()
      },
    }
  } catch (error) {
    await anvil.stop()
    throw error
  }
}
