import { type Address, encodeFunctionData } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { toContracts } from '../chain/addresses.ts'
import { type ChainClient, createChainClient } from '../chain/client.ts'
import { createLogFetcher } from '../chain/log-fetcher.ts'
import { aggregatorV3Abi } from '../chain/price-feeds.ts'
import { setupFromDevnet } from '../cli/chain-setup.ts'
import { createLogger } from '../common/logger.ts'
import type { DbHandle } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { devnetPriceFeedAbi } from '../devnet/abi.ts'
import { startTestChain, type TestChain } from '../devnet/testing.ts'
import { derivedPrice } from '../engine/cross-price.ts'
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
  derived: boolean
  eth_usd_answer: string | null
  eth_usd_decimals: number | null
  eur_usd_feed: string | null
  eur_usd_round_id: string | null
  eur_usd_answer: string | null
  eur_usd_decimals: number | null
  eur_usd_time: Date | null
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
  const followerWithFeeds = (
    dbh: DbHandle,
    priceFeeds: { usd?: string; eur?: string; eurUsd?: string } | undefined,
  ) => {
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

  test("behavior: the devnet's configuration names its ETH / USD and EUR / USD feeds (no ETH / EUR feed: EUR is derived)", () => {
    const { usdPriceFeed, eurPriceFeed } = devnet.simulator.deployment.contracts
    expect(setupFromDevnet(devnet).contracts.priceFeeds).toEqual({
      usd: usdPriceFeed.toLowerCase(),
      eurUsd: eurPriceFeed.toLowerCase(),
    })
  })

  test('behavior: every stored report has a usd row equal to ETH / USD latestRoundData at its block and an eur row derived from it and EUR / USD, both rounds stored; before the first price, a missing price with the revert', async () => {
    const dbh = await freshDb()
    const { usdPriceFeed, eurPriceFeed } = devnet.simulator.deployment.contracts
    await followerWithFeeds(dbh, { usd: usdPriceFeed, eurUsd: eurPriceFeed }).syncOnce()
    const repos = createRepos(dbh.db)
    const reports = await repos.chain.oracleReports(devnet.chainId)
    const simulated = devnet.simulator.state().reports
    expect(reports.length).toBe(DAYS)
    expect(new Set(reports.map((r) => r.report_shape))).toEqual(new Set(['legacy', 'v1']))
    const rows = await storedPrices(dbh)
    expect(rows.length).toBe(2 * DAYS)
    /** The independent reads: a feed itself, at the report's block. */
    const roundAt = (address: Address, blockNumber: bigint) =>
      client.readContract({ address, abi: aggregatorV3Abi, functionName: 'latestRoundData', blockNumber })
    const decimalsAt = (address: Address, blockNumber: bigint) =>
      client.readContract({ address, abi: aggregatorV3Abi, functionName: 'decimals', blockNumber })

    for (const [i, report] of reports.entries()) {
      const block = BigInt(report.block_number)
      const sim = simulated[i]!
      const rowOf = (currency: 'usd' | 'eur') =>
        rows.find(
          (r) =>
            r.block_number === report.block_number &&
            r.log_index === report.log_index &&
            r.currency === currency,
        )
      const usd = rowOf('usd')
      const eur = rowOf('eur')
      expect(usd, `usd row of the report at block ${block}`).toBeDefined()
      expect(eur, `eur row of the report at block ${block}`).toBeDefined()
      expect(usd!.feed).toBe(usdPriceFeed.toLowerCase())
      expect(usd!.derived).toBe(false)
      if (i < PRICES_FROM_DAY) {
        await expect(roundAt(usdPriceFeed, block)).rejects.toThrow(/No data present/)
        await expect(roundAt(eurPriceFeed, block)).rejects.toThrow(/No data present/)
        expect(usd).toMatchObject({
          answer: null,
          round_id: null,
          decimals: null,
          price_time: null,
          missing_reason: `the feed reverted at block ${block}: No data present`,
        })
        // ETH / USD is read first: the reason names it
        expect(eur).toMatchObject({
          feed: usdPriceFeed.toLowerCase(),
          answer: null,
          derived: false,
          eur_usd_feed: null,
          missing_reason: `the ETH/USD price is missing (ETH/EUR is derived from ETH/USD and EUR/USD): the feed reverted at block ${block}: No data present`,
        })
        expect(sim.prices).toBeUndefined()
        continue
      }
      const [roundId, answer, , updatedAt] = await roundAt(usdPriceFeed, block)
      const [eurRoundId, eurAnswer, , eurUpdatedAt] = await roundAt(eurPriceFeed, block)
      const decimals = await decimalsAt(usdPriceFeed, block)
      const eurDecimals = await decimalsAt(eurPriceFeed, block)
      expect(usd).toMatchObject({
        round_id: roundId.toString(),
        answer: answer.toString(),
        decimals,
        missing_reason: null,
        eth_usd_answer: null,
        eur_usd_feed: null,
      })
      expect(usd!.price_time!.getTime()).toBe(Number(updatedAt) * 1000)
      // ETH / EUR = ETH / USD / EUR / USD at 18 decimals, half-even, with both rounds stored
      const quotient = derivedPrice({ answer, decimals }, { answer: eurAnswer, decimals: eurDecimals })
      expect(eur).toMatchObject({
        feed: usdPriceFeed.toLowerCase(),
        round_id: roundId.toString(),
        answer: quotient.answer.toString(),
        decimals: 18,
        missing_reason: null,
        derived: true,
        eth_usd_answer: answer.toString(),
        eth_usd_decimals: decimals,
        eur_usd_feed: eurPriceFeed.toLowerCase(),
        eur_usd_round_id: eurRoundId.toString(),
        eur_usd_answer: eurAnswer.toString(),
        eur_usd_decimals: 8,
      })
      expect(eur!.price_time!.getTime()).toBe(Number(updatedAt) * 1000)
      expect(eur!.eur_usd_time!.getTime()).toBe(Number(eurUpdatedAt) * 1000)
      // the day's prices, set in a block of their own just before the report's
      expect(answer).toBe(sim.prices!.usd)
      expect(eurAnswer).toBe(sim.prices!.eurUsd)
      expect(roundId).toBe(BigInt(i - PRICES_FROM_DAY + 1))
      expect(eurRoundId).toBe(roundId)
      expect(Number(updatedAt)).toBeLessThan(Number(sim.timestamp))
      expect(Number(updatedAt)).toBeGreaterThan(Number(sim.timestamp) - 3600)
      // a EUR price, not a USD one: ETH / EUR = ETH / USD / ~1.09
      expect(quotient.answer * eurAnswer).toBeLessThanOrEqual(answer * 10n ** 18n + eurAnswer)
      expect(quotient.answer).toBeLessThan(answer * 10n ** 10n)
    }
    // the walk moves: not one price repeated over the days
    const usdAnswers = rows.filter((r) => r.currency === 'usd' && r.answer !== null).map((r) => r.answer)
    expect(new Set(usdAnswers).size).toBe(DAYS - PRICES_FROM_DAY)

    // the repository's reads: by report, and by day (report_epoch), one query each
    const byReport = await repos.prices.pricesOfReports(
      devnet.chainId,
      reports.map((r) => ({ block_number: r.block_number, log_index: r.log_index })),
    )
    expect(byReport.size).toBe(DAYS)
    const last = reports.at(-1)!
    const lastPrices = byReport.get(`${last.block_number}:${last.log_index}`)!
    const lastSim = simulated.at(-1)!.prices!
    expect(lastPrices.usd).toMatchObject({ answer: lastSim.usd, decimals: 8 })
    expect('derived_from' in lastPrices.usd).toBe(false)
    const lastEur = lastPrices.eur
    expect(lastEur).toMatchObject({
      feed: usdPriceFeed.toLowerCase(),
      answer: derivedPrice({ answer: lastSim.usd, decimals: 8 }, { answer: lastSim.eurUsd, decimals: 8 })
        .answer,
      decimals: 18,
      derived_from: {
        eth_usd: { feed: usdPriceFeed.toLowerCase(), answer: lastSim.usd, decimals: 8 },
        eur_usd: { feed: eurPriceFeed.toLowerCase(), answer: lastSim.eurUsd, decimals: 8 },
      },
    })
    await repos.days.syncWithReports(devnet.chainId, BigInt(last.block_number))
    const days = await dbh.db('days').select('chain_id', 'report_epoch').orderBy('block_number')
    expect(days.length).toBe(DAYS)
    const byDay = await repos.prices.ofDays(days)
    expect([...byDay.keys()].sort()).toEqual(days.map((d) => d.report_epoch).sort())
    const firstDay = byDay.get(days[0]!.report_epoch)!
    expect(firstDay.usd).toEqual({
      feed: usdPriceFeed.toLowerCase(),
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

    // usd pointed at the EUR / USD feed (a feed of another pair), eur at River (a contract without the calls)
    const { usdPriceFeed, eurPriceFeed } = devnet.simulator.deployment.contracts
    const wrong = await freshDb()
    await followerWithFeeds(wrong, { usd: eurPriceFeed, eur: devnet.contracts.river }).syncOnce()
    const wrongRows = await storedPrices(wrong)
    expect(wrongRows.length).toBe(2 * DAYS)
    for (const row of wrongRows) {
      expect(row.answer).toBeNull()
      if (row.currency === 'usd')
        expect(row.missing_reason).toBe(
          `the feed describes itself as "EUR / USD", not "ETH / USD" (block ${row.block_number})`,
        )
      else expect(row.missing_reason).toMatch(new RegExp(`^the feed reverted at block ${row.block_number}: `))
    }

    // the EUR / USD feed configured as an ETH / EUR one: refused, never stored as ETH / EUR (a factor ~3,000 off)
    const asDirect = await freshDb()
    await followerWithFeeds(asDirect, { usd: usdPriceFeed, eur: eurPriceFeed }).syncOnce()
    for (const row of (await storedPrices(asDirect)).filter((r) => r.currency === 'eur')) {
      expect(row).toMatchObject({ answer: null, derived: false, feed: eurPriceFeed.toLowerCase() })
      expect(row.missing_reason).toBe(
        `the feed describes itself as "EUR / USD", not "ETH / EUR" (block ${row.block_number})`,
      )
    }

    // derived, with eurUsd pointed at the ETH / USD feed, or without an ETH / USD feed: the reason names the pair
    const crossWrong = await freshDb()
    await followerWithFeeds(crossWrong, { usd: usdPriceFeed, eurUsd: usdPriceFeed }).syncOnce()
    const crossRows = (await storedPrices(crossWrong)).filter((r) => r.currency === 'eur')
    expect(crossRows.length).toBe(DAYS)
    for (const row of crossRows) {
      expect(row).toMatchObject({ answer: null, derived: false, feed: usdPriceFeed.toLowerCase() })
      expect(row.missing_reason).toMatch(
        /^the (ETH\/USD|EUR\/USD) price is missing \(ETH\/EUR is derived from ETH\/USD and EUR\/USD\): /,
      )
    }
    // once ETH / USD answers, the EUR / USD side is the one named
    expect(crossRows.at(-1)!.missing_reason).toBe(
      `the EUR/USD price is missing (ETH/EUR is derived from ETH/USD and EUR/USD): the feed describes itself as "ETH / USD", not "EUR / USD" (block ${crossRows.at(-1)!.block_number})`,
    )
    const noUsd = await freshDb()
    await followerWithFeeds(noUsd, { eurUsd: eurPriceFeed }).syncOnce()
    for (const row of (await storedPrices(noUsd)).filter((r) => r.currency === 'eur')) {
      expect(row).toMatchObject({ answer: null, derived: false, feed: null })
      expect(row.missing_reason).toBe(
        `the ETH/USD price is missing (ETH/EUR is derived from ETH/USD and EUR/USD): no ETH/USD feed is configured for chain ${devnet.chainId}`,
      )
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
    // derived: only an eur row with an answer and both rounds; an underived row carries no round columns
    const answered = {
      ...key,
      feed: '0x01',
      round_id: '1',
      answer: '5',
      decimals: 18,
      price_time: new Date(),
      missing_reason: null,
    }
    const rounds = {
      eth_usd_answer: '300000000000',
      eth_usd_decimals: 8,
      eur_usd_feed: '0x02',
      eur_usd_round_id: '1',
      eur_usd_answer: '108700000',
      eur_usd_decimals: 8,
      eur_usd_time: new Date(),
    }
    for (const bad of [
      { ...answered, currency: 'usd', derived: true, ...rounds },
      { ...answered, currency: 'eur', derived: true, ...rounds, eur_usd_feed: null },
      { ...answered, currency: 'eur', derived: true, ...rounds, eur_usd_answer: '0' },
      { ...answered, currency: 'eur', derived: false, ...rounds },
      { ...key, currency: 'eur', feed: null, missing_reason: 'x', derived: true, ...rounds },
    ]) {
      await expect(dbh.db('report_prices').insert(bad)).rejects.toThrow(
        /report_prices_(derived|answer)_check/,
      )
    }
    await dbh.db('report_prices').insert({ ...answered, currency: 'eur', derived: true, ...rounds })
    // and a price without its report: the foreign key
    await expect(
      dbh
        .db('report_prices')
        .insert({ ...key, log_index: 999, currency: 'usd', feed: null, missing_reason: 'x' }),
    ).rejects.toThrow(/foreign key/)
  }, 120_000)
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
