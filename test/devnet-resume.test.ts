import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { compareStoreWithChain } from '../cli/devnet-resume.ts'
import type { DbHandle } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const hash = (branch: string, n: bigint) => `0x${branch.repeat(2)}${n.toString(16).padStart(62, '0')}`

/**
 * What `lsreport up` finds when it resumes its devnet over a database (cli/devnet-resume.ts): the follower's
 * cursors and stored hashes in Postgres, against a chain of hashes (`a` blocks; `b` after a fork).
 */
describe.runIf(pgOk)('compareStoreWithChain', () => {
  let dbh: DbHandle
  let chainId = 41_000
  beforeAll(async () => {
    dbh = await migratedTestDatabase()
  })
  afterAll(async () => {
    await dbh?.close()
  })

  /** A database that read blocks 1..`read` of branch `a` (every 10th block stored, the cursor at `read`). */
  async function storeRead(read: bigint): Promise<number> {
    chainId += 1
    const repos = createRepos(dbh.db)
    const blocks = []
    for (let n = 10n; n <= read; n += 10n) blocks.push({ number: n, hash: hash('a', n), time: new Date() })
    await repos.chain.saveBlocks(chainId, blocks)
    for (const stream of ['river', 'allowlist']) {
      await repos.chain.setCursor({
        chainId,
        stream,
        address: '0x0000000000000000000000000000000000000001',
        blockNumber: read,
        blockHash: hash('a', read),
      })
    }
    return chainId
  }
  /** A chain of branch `a` up to `forkAfter`, of `branch` after it. */
  const chain =
    (branch: string, forkAfter = 1_000_000n) =>
    async (n: bigint) =>
      hash(n <= forkAfter ? 'a' : branch, n)

  test('behavior: no cursors is empty; cursors on the chain are the same chain', async () => {
    expect(await compareStoreWithChain(dbh.db, 40_999, 100n, chain('a'))).toEqual({ kind: 'empty' })
    const id = await storeRead(90n)
    expect(await compareStoreWithChain(dbh.db, id, 90n, chain('a'))).toEqual({ kind: 'same', cursor: 90n })
    expect(await compareStoreWithChain(dbh.db, id, 120n, chain('a'))).toEqual({ kind: 'same', cursor: 90n })
  })

  test('behavior: a database that read past the saved head, or a fork after a stored block, is behind', async () => {
    const id = await storeRead(90n)
    expect(await compareStoreWithChain(dbh.db, id, 75n, chain('a'))).toEqual({
      kind: 'behind',
      cursor: 90n,
      head: 75n,
    })
    expect(await compareStoreWithChain(dbh.db, id, 100n, chain('b', 85n))).toEqual({
      kind: 'behind',
      cursor: 90n,
      head: 100n,
    })
  })

  test('behavior: a chain without the stored blocks is another chain', async () => {
    const id = await storeRead(90n)
    expect(await compareStoreWithChain(dbh.db, id, 200n, chain('b', 0n))).toEqual({
      kind: 'different',
      cursor: 90n,
      head: 200n,
    })
    // the saved chain ends before any block the database stored
    expect((await compareStoreWithChain(dbh.db, id, 5n, chain('a'))).kind).toBe('different')
  })
})
