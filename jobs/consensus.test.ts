import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { ConsensusSnapshot, ConsensusSource } from '../chain/beacon.ts'
import { ConsensusUnavailableError } from '../chain/errors.ts'
import { createLogger } from '../common/logger.ts'
import { type DbHandle, migrate, openDb } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { createConsensusJob } from './consensus.ts'

const snapshot = (epoch: number): ConsensusSnapshot => ({
  epoch,
  active_validators: 1_000_000,
  total_active_balance_gwei: 32_000_000_000_000_000n,
  queued_exit_balance_gwei: 123_456_789_000_000n,
  sweep_eligible_validators: 1_000_000,
  source: 'beacon',
})

/** A source answering `answers` in turn (the same object twice stands for a cached answer). */
function scripted(answers: (ConsensusSnapshot | Error)[]): ConsensusSource {
  let i = 0
  return {
    async snapshot() {
      const answer = answers[Math.min(i++, answers.length - 1)]!
      if (answer instanceof Error) throw answer
      return answer
    },
  }
}

describe('createConsensusJob', () => {
  let dbh: DbHandle
  beforeAll(async () => {
    dbh = await openDb({})
    await migrate(dbh.db)
  }, 60_000)
  afterAll(async () => {
    await dbh?.close()
  })

  test('behavior: a pass stores a new read as its chain latest; a cached answer stores nothing; a failure throws', async () => {
    const repos = createRepos(dbh.db)
    expect(await repos.consensus.latest()).toBeUndefined()
    const first = snapshot(400_000)
    const job = createConsensusJob({
      db: dbh.db,
      chainId: 1,
      source: scripted([first, first, snapshot(400_010), new ConsensusUnavailableError('beacon down')]),
      logger: createLogger({ level: 'silent' }),
    })
    expect(await job.runOnce()).toEqual({ epoch: 400_000, source: 'beacon', stored: true })
    const stored = await repos.consensus.latest(1)
    expect(stored).toMatchObject({ chain_id: 1, ...first })
    expect(await job.runOnce()).toEqual({ epoch: 400_000, source: 'beacon', stored: false })
    expect((await repos.consensus.latest(1))?.read_at).toEqual(stored?.read_at)
    expect(await job.runOnce()).toMatchObject({ epoch: 400_010, stored: true })
    await expect(job.runOnce()).rejects.toBeInstanceOf(ConsensusUnavailableError)
    // the failed read leaves the previous snapshot in place
    expect((await repos.consensus.latest())?.epoch).toBe(400_010)
  })

  test('behavior: an older read never replaces a newer one of the same chain', async () => {
    const repos = createRepos(dbh.db)
    const now = Date.now()
    await repos.consensus.save({ chain_id: 5, ...snapshot(10), read_at: new Date(now) })
    await repos.consensus.save({ chain_id: 5, ...snapshot(9), read_at: new Date(now - 60_000) })
    expect((await repos.consensus.latest(5))?.epoch).toBe(10)
    await repos.consensus.save({ chain_id: 5, ...snapshot(11), read_at: new Date(now + 1) })
    expect((await repos.consensus.latest(5))?.epoch).toBe(11)
  })
})
