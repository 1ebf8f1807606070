import { createHash } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { createSimulator } from './simulator.ts'
import { startTestChain } from './testing.ts'

/**
 * sha256 of a short seeded history: every log of the chain, the head block's hash and state root, and the
 * simulator's state and consensus facts. A change here means the simulator builds a different history from the
 * same seed; update it only for an intended change. Recorded again when the contracts moved behind EIP-1967
 * proxies with the AllowlistFirewall (new addresses, initializer events, allowlisting through the firewall;
 * the same users, deposits, reports and claims), and when the Allowlist and the firewall took their admin
 * handover from one Administrable contract (the same ABI and storage; other bytecode). Recorded again when the
 * ETH / USD and ETH / EUR PriceFeeds joined the deploy block (after every protocol contract: no address moved)
 * and each day's prices got a block of their own before the report: the head's hash and state root, the block
 * numbers of later logs and the simulator's block and transaction counts changed; the protocol's logs (address,
 * topics, data), addresses, wallets, reports and consensus facts were checked to be the same as before.
 */
const EXPECTED = 'fc2b1c6ced60bd4f6cee879e3b53c2eef91c0442707d98df5bf9806756b73277'

describe('createSimulator', () => {
  test('behavior: a seeded 6-day history has the recorded fingerprint (blocks, logs, state, consensus facts)', async () => {
    const chain = await startTestChain({ startDate: '2026-04-01', bytecode: 'imitation' })
    try {
      const simulator = await createSimulator({
        publicClient: chain.publicClient,
        testClient: chain.testClient,
        deployment: chain.deployment,
        seed: 77,
        walletCount: 30,
        startDate: '2026-04-01',
        lossDay: 2,
        feeChange: { day: 3, fee: 1200 },
        denyDay: 2,
        behavior: { redeem: 0.08, transfer: 0.05 },
      })
      await simulator.runDays(6)
      await simulator.stop()
      const logs = await chain.publicClient.getLogs({ fromBlock: 0n, toBlock: 'latest' })
      const head = await chain.publicClient.getBlock({ blockTag: 'latest' })
      const material = {
        logs: logs.map((l) => [l.blockNumber, l.logIndex, l.address, l.topics, l.data, l.transactionHash]),
        head: [head.number, head.hash, head.stateRoot],
        state: simulator.state(),
        consensus: simulator.consensusHistory(),
      }
      const text = JSON.stringify(material, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))
      expect(logs.length).toBeGreaterThan(50)
      expect(createHash('sha256').update(text).digest('hex')).toBe(EXPECTED)
    } finally {
      await chain.stop()
    }
  }, 60_000)
})
