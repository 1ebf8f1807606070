import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createOrg } from '../cli/admin.ts'
import { type DbHandle, migrate, openDb } from '../db/index.ts'
import { PgliteAbortError } from '../db/pglite-guard.ts'
import { createRepos } from '../db/repos/index.ts'
import { whereTuplesIn } from '../db/tuple-list.ts'
import { createPlatformService } from '../platform/service.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const CHAIN = 17_000
const OWNER = '0x00000000000000000000000000000000000be001'
/**
 * Chunks of positions: a few hundred made PGlite answer `(a, b) in ((..), ...)` with nothing (knex then gave
 * the pg Result: "rows is not iterable", where `bench:follower` stopped); Postgres fails with "stack depth
 * limit exceeded" past 5,000-10,000 tuples.
 */
const CHUNKS = [400, 12_000]
const POSITIONS = 12_000

/** The event columns every chain table has (db/migrations/002_chain.ts). */
const eventKey = (block: number, logIndex: number) => ({
  chain_id: CHAIN,
  block_number: block,
  log_index: logIndex,
  tx_index: 0,
  block_hash: `0x${'b'.repeat(64)}`,
  tx_hash: `0x${block.toString(16).padStart(64, '0')}`,
  block_time: new Date('2026-01-02T00:00:00Z'),
})

/** An org whose wallet owns redeem request 1, satisfied at block 500 and claimed at block 600. */
async function seedRedeem(dbh: DbHandle) {
  const db = dbh.db
  const org = await createOrg(db, { name: 'redeemer', canAllowlist: true })
  const platform = createPlatformService(db)
  await platform.createAccount(org.id, 'omnibus', 'test')
  await platform.createWallet(
    { id: org.id, can_allowlist: true },
    'omnibus',
    { address: OWNER, type: 'ETH', allowlisted: true },
    'test',
  )
  await db('redeem_requests').insert({
    ...eventKey(400, 0),
    request_id: 1,
    recipient: OWNER,
    height: '0',
    amount: '10',
    max_redeemable_eth: '11',
  })
  await db('redeem_satisfactions').insert({
    ...eventKey(500, 3),
    request_id: 1,
    withdrawal_event_id: 9,
    lseth_amount_satisfied: '10',
    eth_amount_satisfied: '11',
    lseth_amount_remaining: '0',
    eth_amount_exceeding: '0',
  })
  await db('redeem_claims').insert({
    ...eventKey(600, 4),
    request_id: 1,
    recipient: OWNER,
    eth_amount: '11',
    lseth_amount: '10',
    remaining_lseth_amount: '0',
  })
}

/** `count` chain positions with no event, and the given real one among them. */
function positionsAround(count: number, real: { block_number: string; log_index: number }) {
  const positions = Array.from({ length: count }, (_, i) => ({
    block_number: String(1_000 + Math.floor(i / 4)),
    log_index: i % 4,
  }))
  positions.splice(count / 2, 0, real)
  return positions
}

for (const backend of ['pglite', 'postgres'] as const) {
  describe.runIf(backend === 'pglite' || pgOk)(`lists of chain positions on ${backend}`, () => {
    let dbh: DbHandle
    beforeAll(async () => {
      if (backend === 'postgres') dbh = await migratedTestDatabase()
      else {
        dbh = await openDb({})
        await migrate(dbh.db)
      }
      await seedRedeem(dbh)
    }, 60_000)
    afterAll(async () => {
      await dbh?.close()
    })

    test.each(CHUNKS)(
      'behavior: redeem events are emitted from a chunk of %i positions (the follower path that stopped bench:follower)',
      async (count) => {
        await dbh.db('webhook_events').delete()
        const repos = createRepos(dbh.db)
        const satisfied = positionsAround(count, { block_number: '500', log_index: 3 })
        const claimed = positionsAround(count, { block_number: '600', log_index: 4 })
        expect(await repos.webhooks.emitRedeemEvents(CHAIN, 'satisfied', satisfied)).toBe(1)
        expect(await repos.webhooks.emitRedeemEvents(CHAIN, 'claimed', claimed)).toBe(1)
        const events = await dbh.db('webhook_events').select('type', 'fact_key').orderBy('type')
        expect(events).toEqual([
          { type: 'redeem.claimed', fact_key: `redeem.claimed:${CHAIN}:${eventKey(600, 4).tx_hash}:4` },
          { type: 'redeem.satisfied', fact_key: `redeem.satisfied:${CHAIN}:${eventKey(500, 3).tx_hash}:3` },
        ])
        // the same facts again: nothing new
        expect(await repos.webhooks.emitRedeemEvents(CHAIN, 'satisfied', satisfied)).toBe(0)
      },
      60_000,
    )

    test(`behavior: the prices of ${POSITIONS} reports are read in one query (db/repos/prices.ts)`, async () => {
      // the price rows alone: their reports' rows are not what this reads (foreign keys off in this transaction)
      await dbh.db.transaction(async (tx) => {
        await tx.raw('set local session_replication_role = replica')
        await tx('report_prices').insert(
          [700, 701].map((block) => ({
            chain_id: CHAIN,
            block_number: block,
            log_index: 1,
            currency: 'usd',
            feed: null,
            missing_reason: 'no feed',
          })),
        )
      })
      const reports = [
        ...Array.from({ length: POSITIONS }, (_, i) => ({ block_number: BigInt(20_000 + i), log_index: 1 })),
        { block_number: 700n, log_index: 1 },
        { block_number: '701', log_index: 1 },
      ]
      const prices = await createRepos(dbh.db).prices.pricesOfReports(CHAIN, reports)
      expect([...prices.keys()].sort()).toEqual(['700:1', '701:1'])
    })

    test('behavior: whereTuplesIn finds exactly the listed tuples, duplicates and misses included', async () => {
      const tuples: [bigint, number][] = [
        [500n, 3],
        [500n, 3],
        [600n, 4],
        [500n, 4],
        ...Array.from({ length: POSITIONS }, (_, i): [bigint, number] => [BigInt(10_000 + i), 0]),
      ]
      const rows = await whereTuplesIn(
        dbh.db('redeem_satisfactions').select('block_number', 'log_index'),
        ['block_number', 'log_index'],
        ['bigint', 'int'],
        tuples,
      )
      expect(rows).toEqual([{ block_number: '500', log_index: 3 }])
      expect(() => whereTuplesIn(dbh.db('redeem_claims'), ['a'], ['int; drop table x'], [[1]])).toThrow(
        /unsupported type/,
      )
    })
  })
}

describe('a statement PGlite abandons (db/pglite-guard.ts)', () => {
  test('behavior: a statement nested past the JavaScript stack fails, and so does every one after it, rather than answering no rows', async () => {
    const dbh = await openDb({})
    try {
      await dbh.db.raw('create table pairs (a int, b int)')
      await dbh.db.raw('insert into pairs select g, g from generate_series(1, 5) g')
      const nested = (n: number) =>
        dbh.db('pairs').whereIn(
          ['a', 'b'],
          Array.from({ length: n }, (_, i) => [i, i]),
        )
      // shallow enough: answered
      expect(await nested(50)).toHaveLength(5)
      // PGlite swallowed the stack overflow: pg saw no command and no rows, knex handed back the Result
      await expect(nested(2_000)).rejects.toThrow(PgliteAbortError)
      // its backend was unwound without cleanup: nothing runs on it any more
      await expect(dbh.db.raw('select 1 as one')).rejects.toThrow(/earlier statement was abandoned/)
    } finally {
      await dbh.close()
    }
  }, 60_000)
})
