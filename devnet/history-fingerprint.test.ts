import { createHash } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { startProtocolHistory } from './testing-history.ts'

/**
 * sha256 of a short seeded history on the protocol's own bytecode (a `current` history: every release in the
 * deploy block, as `launchDevnet` deploys it): every log of the chain, the head block's hash and state root, and
 * the simulator's state and consensus facts. A change here means the simulator (or the deployment) builds a
 * different history from the same seed; update it only for an intended change, after checking that two runs
 * agree (the test builds the history twice). Recorded afresh when the history moved from the devnet's imitation
 * contracts to the protocol's bytecode (other addresses, code, events and amounts throughout: the real River
 * mints a fee on the EL fees of the loss day, the reports are two members' votes, the keeper adds keys).
 * Recorded again when the second price feed became EUR / USD instead of ETH / EUR: only that feed's answers,
 * its AnswerUpdated logs and the state roots (so the block hashes) moved; every other log, the consensus facts
 * and the ETH / USD path are the same.
 */
const EXPECTED = 'b92431c4cb335801486bad10d76161a273891f80768034d9ee84b97898f43887'

/** The fingerprint of the seeded 6-day history and its log count. */
async function fingerprint(): Promise<{ digest: string; logCount: number }> {
  const run = await startProtocolHistory({
    seed: 77,
    walletCount: 30,
    startDate: '2026-04-01',
    lossDay: 2,
    feeChange: { day: 3, fee: 1200 },
    denyDay: 2,
    behavior: { redeem: 0.08, transfer: 0.05 },
  })
  try {
    await run.simulator.runDays(6)
    await run.simulator.stop()
    const logs = await run.logs()
    const head = await run.publicClient.getBlock({ blockTag: 'latest' })
    const material = {
      logs: logs.map((l) => [l.blockNumber, l.logIndex, l.address, l.topics, l.data, l.transactionHash]),
      head: [head.number, head.hash, head.stateRoot],
      state: run.simulator.state(),
      consensus: run.simulator.consensusHistory(),
    }
    const text = JSON.stringify(material, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))
    return { digest: createHash('sha256').update(text).digest('hex'), logCount: logs.length }
  } finally {
    await run.stop()
  }
}

describe('createSimulator', () => {
  test('behavior: a seeded 6-day history on the protocol bytecode has the recorded fingerprint (blocks, logs, state, consensus facts), twice', async () => {
    const [first, second] = await Promise.all([fingerprint(), fingerprint()])
    expect(first.logCount).toBeGreaterThan(50)
    expect(second.digest).toBe(first.digest)
    expect(first.digest, `fingerprint ${first.digest}`).toBe(EXPECTED)
  }, 60_000)
})
