import { type Address, encodeFunctionData } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { toContracts } from '../chain/addresses.ts'
import { type ChainClient, createChainClient } from '../chain/client.ts'
import { createLogFetcher } from '../chain/log-fetcher.ts'
import { aggregatorV3Abi, readPriceFeeds } from '../chain/price-feeds.ts'
import { setupFromDevnet } from '../cli/chain-setup.ts'
import { createLogger } from '../common/logger.ts'
import type { DbHandle } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { devnetPriceFeedAbi } from '../devnet/abi.ts'
import { startTestChain, type TestChain } from '../devnet/testing.ts'
import { createFollower } from '../jobs/follower/index.ts'
import { devnetFollower } from './helpers/chain.ts'
import { SHORT_VERSIONED_HISTORY, startTestDevnet, type TestDevnet } from './helpers/devnet.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'
import { reportSequence } from './helpers/test-reports.ts'

const pgOk = await postgresAvailable()
const DAYS = 8
/** The simulator sets prices from this day on: the reports of days 0 and 1 find feeds without a round. */
const PRICES_FROM_DAY = 2

interface StoredRow {
  block_number: string
  log_index: number
  currency: 'usd' | 'eur'
  feed: string | null
  round_id: string | null
  answer: string | null
  decimals: number | null
  price_time: Date | null
  missing_reason: string | null
}

/** Every stored price row of a database, by report and currency. */
async function storedPrices(dbh: DbHandle): Promise<StoredRow[]> {
  return dbh.db('report_prices').select('*').orderBy(['block_number', 'log_index', 'currency'])
}

describe.runIf(pgOk)('ETH prices beside the reports (devnet, Postgres)', () => {
  let devnet: TestDevnet
  let client: ChainClient
  const handles: DbHandle[] = []
  const freshDb = async () => {
    const dbh = await migratedTestDatabase()
    handles.push(dbh)
    return dbh
  }
  /** A follower of the devnet whose price feeds are `priceFeeds` instead of the deployment's. */
  const followerWithFeeds = (dbh: DbHandle, priceFeeds: { usd?: string; eur?: string } | undefined) => {
    const { priceFeeds: _deployed, ...contracts } = devnet.contracts
    return createFollower({
      db: dbh.db,
      client,
      fetcher: createLogFetcher({ client, baseDelayMs: 20, maxDelayMs: 200 }),
      chainId: devnet.chainId,
      contracts: toContracts({
        ...contracts,
        firewall: devnet.firewall,
        startBlock: devnet.deployBlock,
        ...(priceFeeds ? { priceFeeds } : {}),
      }),
      confirmations: 0,
      logger: createLogger({ level: 'silent' }),
    })
  }

  beforeAll(async () => {
    devnet = await startTestDevnet('prices', {
      // legacy (0.4.0, 0.5.0) and v1 reports alike get prices
      ...SHORT_VERSIONED_HISTORY,
      simulator: { pricesFromDay: PRICES_FROM_DAY },
      days: DAYS,
      walletCount: 12,
      dayIntervalMs: 0,
      blockIntervalMs: 100,
    })
    client = createChainClient({ rpcUrl: devnet.rpcUrl, chainId: devnet.chainId })
  }, 300_000)
  afterAll(async () => {
    await devnet?.stop()
    for (const h of handles) await h.close()
  })

  test('behavior: every stored report has a usd and an eur row equal to latestRoundData read at its block; before the first price, a missing price with the revert', async () => {
    const dbh = await freshDb()
    expect(setupFromDevnet(devnet).contracts.priceFeeds).toEqual({
      usd: devnet.contracts.priceFeeds.usd.toLowerCase(),
      eur: devnet.contracts.priceFeeds.eur.toLowerCase(),
    })
    await devnetFollower(dbh.db, devnet).syncOnce()
    const repos = createRepos(dbh.db)
    const reports = await repos.chain.oracleReports(devnet.chainId)
    const simulated = devnet.simulator.state().reports
    expect(reports.length).toBe(DAYS)
    expect(new Set(reports.map((r) => r.report_shape))).toEqual(new Set(['legacy', 'v1']))
    const rows = await storedPrices(dbh)
    expect(rows.length).toBe(2 * DAYS)

    for (const [i, report] of reports.entries()) {
      const block = BigInt(report.block_number)
      const sim = simulated[i]!
      for (const currency of ['usd', 'eur'] as const) {
        const feed = devnet.contracts.priceFeeds[currency] as Address
        const row = rows.find(
          (r) =>
            r.block_number === report.block_number &&
            r.log_index === report.log_index &&
            r.currency === currency,
        )
        expect(row, `${currency} row of the report at block ${block}`).toBeDefined()
        expect(row!.feed).toBe(feed.toLowerCase())
        // the independent read: the feed itself, at the report's block
        const read = client.readContract({
          address: feed,
          abi: aggregatorV3Abi,
          functionName: 'latestRoundData',
          blockNumber: block,
        })
        if (i < PRICES_FROM_DAY) {
          await expect(read).rejects.toThrow(/No data present/)
          expect(row).toMatchObject({
            answer: null,
            round_id: null,
            decimals: null,
            price_time: null,
            missing_reason: `the feed reverted at block ${block}: No data present`,
          })
          expect(sim.prices).toBeUndefined()
          continue
        }
        const [roundId, answer, , updatedAt] = await read
        const decimals = await client.readContract({
          address: feed,
          abi: aggregatorV3Abi,
          functionName: 'decimals',
          blockNumber: block,
        })
        expect(row).toMatchObject({
          round_id: roundId.toString(),
          answer: answer.toString(),
          decimals,
          missing_reason: null,
        })
        expect(row!.price_time!.getTime()).toBe(Number(updatedAt) * 1000)
        // the day's price, set in a block of its own just before the report's
        expect(answer).toBe(sim.prices![currency])
        expect(roundId).toBe(BigInt(i - PRICES_FROM_DAY + 1))
        expect(Number(updatedAt)).toBeLessThan(Number(sim.timestamp))
        expect(Number(updatedAt)).toBeGreaterThan(Number(sim.timestamp) - 3600)
      }
    }
    // the walk moves: not one price repeated over the days
    const usd = rows.filter((r) => r.currency === 'usd' && r.answer !== null).map((r) => r.answer)
    expect(new Set(usd).size).toBe(DAYS - PRICES_FROM_DAY)

    // the repository's reads: by report, and by day (report_epoch), one query each
    const byReport = await repos.prices.pricesOfReports(
      devnet.chainId,
      reports.map((r) => ({ block_number: r.block_number, log_index: r.log_index })),
    )
    expect(byReport.size).toBe(DAYS)
    const last = reports.at(-1)!
    const lastPrices = byReport.get(`${last.block_number}:${last.log_index}`)!
    expect(lastPrices.usd).toMatchObject({ answer: simulated.at(-1)!.prices!.usd, decimals: 8 })
    expect(lastPrices.eur).toMatchObject({ answer: simulated.at(-1)!.prices!.eur, decimals: 8 })
    await repos.days.syncWithReports(devnet.chainId, BigInt(last.block_number))
    const days = await dbh.db('days').select('chain_id', 'report_epoch').orderBy('block_number')
    expect(days.length).toBe(DAYS)
    const byDay = await repos.prices.ofDays(days)
    expect([...byDay.keys()].sort()).toEqual(days.map((d) => d.report_epoch).sort())
    const firstDay = byDay.get(days[0]!.report_epoch)!
    expect(firstDay.usd).toEqual({
      feed: devnet.contracts.priceFeeds.usd.toLowerCase(),
      missing_reason: `the feed reverted at block ${reports[0]!.block_number}: No data present`,
    })
    expect(byDay.get(days.at(-1)!.report_epoch)).toEqual(lastPrices)
    expect(await repos.prices.ofDays([{ chain_id: devnet.chainId, report_epoch: '1' }])).toEqual(new Map())
  }, 120_000)

  test('behavior: a chain without feeds stores a missing price naming the currency and chain, never an answer; a feed of the wrong pair or a contract that is no feed stores its reason', async () => {
    const none = await freshDb()
    await followerWithFeeds(none, undefined).syncOnce()
    const rows = await storedPrices(none)
    expect(rows.length).toBe(2 * DAYS)
    for (const row of rows) {
      expect(row).toMatchObject({
        feed: null,
        answer: null,
        round_id: null,
        decimals: null,
        price_time: null,
      })
      expect(row.missing_reason).toBe(
        `no ETH/${row.currency.toUpperCase()} feed is configured for chain ${devnet.chainId}`,
      )
    }

    // usd pointed at the ETH / EUR feed (a feed of another pair), eur at River (a contract without the calls)
    const wrong = await freshDb()
    await followerWithFeeds(wrong, {
      usd: devnet.contracts.priceFeeds.eur,
      eur: devnet.contracts.river,
    }).syncOnce()
    const wrongRows = await storedPrices(wrong)
    expect(wrongRows.length).toBe(2 * DAYS)
    for (const row of wrongRows) {
      expect(row.answer).toBeNull()
      if (row.currency === 'usd')
        expect(row.missing_reason).toBe(
          `the feed describes itself as "ETH / EUR", not "ETH / USD" (block ${row.block_number})`,
        )
      else expect(row.missing_reason).toMatch(new RegExp(`^the feed reverted at block ${row.block_number}: `))
    }
  }, 120_000)

  test('behavior: the database refuses a row with both an answer and a reason, or with neither', async () => {
    const dbh = await freshDb()
    await devnetFollower(dbh.db, devnet).syncOnce()
    const report = (await createRepos(dbh.db).chain.oracleReports(devnet.chainId))[0]!
    const key = { chain_id: devnet.chainId, block_number: report.block_number, log_index: report.log_index }
    await dbh.db('report_prices').where(key).delete()
    await expect(
      dbh.db('report_prices').insert({ ...key, currency: 'usd', feed: null, missing_reason: null }),
    ).rejects.toThrow(/report_prices_answer_check/)
    await expect(
      dbh.db('report_prices').insert({
        ...key,
        currency: 'usd',
        feed: '0x01',
        round_id: '1',
        answer: '5',
        decimals: 8,
        price_time: new Date(),
        missing_reason: 'both',
      }),
    ).rejects.toThrow(/report_prices_answer_check/)
    // and a price without its report: the foreign key
    await expect(
      dbh
        .db('report_prices')
        .insert({ ...key, log_index: 999, currency: 'usd', feed: null, missing_reason: 'x' }),
    ).rejects.toThrow(/foreign key/)
  }, 120_000)
})

describe('readPriceFeeds (a devnet chain driven by hand)', () => {
  let chain: TestChain
  let client: ChainClient
  const feeds = () => ({
    usd: chain.deployment.contracts.usdPriceFeed.toLowerCase() as never,
    eur: chain.deployment.contracts.eurPriceFeed.toLowerCase() as never,
  })
  const update = (to: Address, answer: bigint) => ({
    from: chain.deployment.roles.admin,
    to,
    data: encodeFunctionData({ abi: devnetPriceFeedAbi, functionName: 'updateAnswer', args: [answer] }),
    gas: 300_000n,
    label: `updateAnswer ${answer}`,
  })

  beforeAll(async () => {
    chain = await startTestChain()
    client = createChainClient({ rpcUrl: chain.anvil.rpcUrl })
  }, 60_000)
  afterAll(async () => {
    await chain?.stop()
  })

  test('behavior: before the feeds are deployed, no code; deployed without a round, the revert; after an update, the answer', async () => {
    const deployBlock = chain.deployment.deployBlock
    expect(await readPriceFeeds(client, 31337, feeds(), deployBlock - 1n)).toEqual({
      usd: {
        feed: feeds().usd,
        missing_reason: `the feed has no code at block ${deployBlock - 1n} (deployed later)`,
      },
      eur: {
        feed: feeds().eur,
        missing_reason: `the feed has no code at block ${deployBlock - 1n} (deployed later)`,
      },
    })
    expect((await readPriceFeeds(client, 31337, feeds(), deployBlock)).usd).toEqual({
      feed: feeds().usd,
      missing_reason: `the feed reverted at block ${deployBlock}: No data present`,
    })
    const block = await chain.mine([
      update(chain.deployment.contracts.usdPriceFeed, 312_345_678_901n),
      update(chain.deployment.contracts.eurPriceFeed, 287_358_024_589n),
    ])
    expect(await readPriceFeeds(client, 31337, feeds(), block.number)).toEqual({
      usd: {
        feed: feeds().usd,
        round_id: 1n,
        answer: 312_345_678_901n,
        decimals: 8,
        price_time: new Date(Number(block.timestamp) * 1000),
      },
      eur: {
        feed: feeds().eur,
        round_id: 1n,
        answer: 287_358_024_589n,
        decimals: 8,
        price_time: new Date(Number(block.timestamp) * 1000),
      },
    })
    // no feed configured for a currency: missing, naming it and the chain (hoodi's case)
    expect(await readPriceFeeds(client, 560048, { usd: feeds().usd }, block.number)).toMatchObject({
      usd: { answer: 312_345_678_901n },
      eur: { feed: null, missing_reason: 'no ETH/EUR feed is configured for chain 560048' },
    })
    expect(await readPriceFeeds(client, 560048, undefined, block.number)).toEqual({
      usd: { feed: null, missing_reason: 'no ETH/USD feed is configured for chain 560048' },
      eur: { feed: null, missing_reason: 'no ETH/EUR feed is configured for chain 560048' },
    })
  })

  test('behavior: a zero or negative answer is a missing price; the previous round is not used', async () => {
    const zero = await chain.mine([update(chain.deployment.contracts.usdPriceFeed, 0n)])
    const negative = await chain.mine([update(chain.deployment.contracts.eurPriceFeed, -5n)])
    const read = await readPriceFeeds(client, 31337, feeds(), negative.number)
    expect(read.usd).toEqual({
      feed: feeds().usd,
      missing_reason: `the feed answered a non-positive price (0) at block ${negative.number}`,
    })
    expect(read.eur).toEqual({
      feed: feeds().eur,
      missing_reason: `the feed answered a non-positive price (-5) at block ${negative.number}`,
    })
    expect(zero.number).toBeLessThan(negative.number)
  })

  test('behavior: an RPC error is thrown, never stored as a missing price', async () => {
    const head = await client.getBlockNumber()
    // a block the node does not have: the node refuses the call (a permanent error, not a revert)
    await expect(readPriceFeeds(client, 31337, feeds(), head + 1000n)).rejects.toThrow()
    const unreachable = createChainClient({ rpcUrl: 'http://127.0.0.1:9/', timeoutMs: 500 })
    await expect(readPriceFeeds(unreachable, 31337, feeds(), head)).rejects.toThrow()
  }, 60_000)
})

describe.runIf(pgOk)('report prices across a reorg (Postgres, anvil)', () => {
  let chain: TestChain
  let dbh: DbHandle | undefined
  const ETH = 10n ** 18n
  const alice: Address = '0x00000000000000000000000000000000000a11ce'
  const reportInput = reportSequence()
  const setPrice = (usd: bigint) =>
    chain.mine([
      {
        from: chain.deployment.roles.admin,
        to: chain.deployment.contracts.usdPriceFeed,
        data: encodeFunctionData({ abi: devnetPriceFeedAbi, functionName: 'updateAnswer', args: [usd] }),
        gas: 300_000n,
        label: `ETH / USD ${usd}`,
      },
    ])

  beforeAll(async () => {
    chain = await startTestChain({ startDate: '2026-04-20', stake: { deposits: [[alice, 160n * ETH]] } })
    await setPrice(300_000_000_000n)
    await chain.report(reportInput(128n * ETH + 10n ** 17n))
  }, 120_000)
  afterAll(async () => {
    await dbh?.close()
    await chain?.stop()
  })

  test("behavior: a reorg that re-mines a report at another price replaces its rows (the old branch's price is gone)", async () => {
    dbh = await migratedTestDatabase()
    const client = createChainClient({ rpcUrl: chain.anvil.rpcUrl, chainId: chain.anvil.chainId })
    const follower = createFollower({
      db: dbh.db,
      client,
      fetcher: createLogFetcher({ client, baseDelayMs: 20, maxDelayMs: 200 }),
      chainId: chain.anvil.chainId,
      contracts: toContracts({
        ...chain.deployment.contracts,
        priceFeeds: { usd: chain.deployment.contracts.usdPriceFeed },
        startBlock: chain.deployment.deployBlock,
      }),
      confirmations: 0,
      logger: createLogger({ level: 'silent' }),
    })
    const usdRows = () =>
      dbh!
        .db('report_prices')
        .where({ currency: 'usd' })
        .orderBy('block_number')
        .select('block_number', 'log_index', 'answer')
    const beforeSecond = await chain.testClient.snapshot()
    await setPrice(310_000_000_000n)
    const branchA = await chain.report(reportInput(128n * ETH + 2n * 10n ** 17n))
    await follower.syncOnce()
    const reportsA = await createRepos(dbh.db).chain.oracleReports(chain.anvil.chainId)
    expect(reportsA.length).toBe(2)
    expect((await usdRows()).map((r) => r.answer)).toEqual(['300000000000', '310000000000'])

    // branch B: the same report re-mined at the same height, after another price
    await chain.revert(beforeSecond)
    await setPrice(290_000_000_000n)
    const branchB = await chain.report(reportInput(128n * ETH + 3n * 10n ** 17n, true))
    await chain.mine([])
    expect(branchB.number).toBe(branchA.number)
    expect(branchB.hash).not.toBe(branchA.hash)
    const synced = await follower.syncOnce()
    expect(synced.rolledBackFrom).toBeDefined()
    const rows = await usdRows()
    expect(rows.map((r) => r.answer)).toEqual(['300000000000', '290000000000'])
    expect(rows[1]!.block_number).toBe(branchB.number.toString())
    // every report has exactly its pair of rows, eur missing (no feed configured)
    const all = await dbh.db('report_prices').count<{ n: string }[]>({ n: '*' })
    expect(Number(all[0]!.n)).toBe(4)
  }, 120_000)
})
