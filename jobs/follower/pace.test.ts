import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { DbHandle } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import { migratedTestDatabase, postgresAvailable } from '../../test/helpers/services.ts'
import { followerBlock, followerPace } from './pace.ts'

const pgOk = await postgresAvailable()
const CHAIN = 11
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.runIf(pgOk)('followerPace (Postgres)', () => {
  let dbh: DbHandle & { url: string }
  const cursor = (stream: string, block: bigint) =>
    createRepos(dbh.db).chain.setCursor({
      chainId: CHAIN,
      stream,
      address: '0x0000000000000000000000000000000000000001',
      blockNumber: block,
      blockHash: null,
    })

  beforeAll(async () => {
    dbh = await migratedTestDatabase()
  })
  afterAll(async () => {
    await dbh?.close()
  })

  test('behavior: before a first sync nothing waits; then the producer waits until every stream is within the lead, or until it stops', async () => {
    expect(await followerBlock(dbh.db, CHAIN)).toBeUndefined()
    const pace = followerPace(dbh.db, CHAIN, { maxLead: 10, pollMs: 10 })
    await pace(1_000n, new AbortController().signal) // no cursor yet: at once

    await cursor('river', 95n)
    await cursor('allowlist', 80n)
    // the lowest stream counts
    expect(await followerBlock(dbh.db, CHAIN)).toBe(80n)
    await pace(90n, new AbortController().signal) // 10 ahead of 80: within the lead

    let done = false
    const waiting = pace(100n, new AbortController().signal).then(() => {
      done = true
    })
    await sleep(60)
    expect(done).toBe(false) // 20 ahead
    await cursor('allowlist', 89n)
    await sleep(60)
    expect(done).toBe(false) // 11 ahead
    await cursor('allowlist', 96n)
    await waiting // river's 95: 5 ahead
    expect(done).toBe(true)

    // a producer that stops is not held by a follower that stopped too
    const stop = new AbortController()
    let stopped = false
    const held = pace(500n, stop.signal).then(() => {
      stopped = true
    })
    await sleep(40)
    expect(stopped).toBe(false)
    stop.abort()
    await held
    expect(stopped).toBe(true)
  })
})
