import { type Address, encodeFunctionData } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type ChainClient, createChainClient } from '../chain/client.ts'
import { readPriceFeeds } from '../chain/price-feeds.ts'
import { devnetPriceFeedAbi } from '../devnet/abi.ts'
import { startTestChain, type TestChain } from '../devnet/testing.ts'

describe('readPriceFeeds (a devnet chain driven by hand)', () => {
  let chain: TestChain
  let client: ChainClient
  /** The devnet's feeds as configured: ETH / USD, and EUR / USD to derive ETH / EUR from. */
  const feeds = () => ({
    usd: chain.deployment.contracts.usdPriceFeed.toLowerCase() as never,
    eurUsd: chain.deployment.contracts.eurPriceFeed.toLowerCase() as never,
  })
  const update = (to: Address, answer: bigint) => ({
    from: chain.deployment.roles.admin,
    to,
    data: encodeFunctionData({ abi: devnetPriceFeedAbi, functionName: 'updateAnswer', args: [answer] }),
    gas: 300_000n,
    label: `updateAnswer ${answer}`,
  })
  const DERIVED = '(ETH/EUR is derived from ETH/USD and EUR/USD)'

  beforeAll(async () => {
    chain = await startTestChain()
    client = createChainClient({ rpcUrl: chain.anvil.rpcUrl })
  }, 60_000)
  afterAll(async () => {
    await chain?.stop()
  })

  test('behavior: before the feeds are deployed, no code; deployed without a round, the revert; after an update, the ETH / USD answer and both rounds of ETH / EUR', async () => {
    const deployBlock = chain.deployment.deployBlock
    expect(await readPriceFeeds(client, 31337, feeds(), deployBlock - 1n)).toEqual({
      usd: {
        feed: feeds().usd,
        missing_reason: `the feed has no code at block ${deployBlock - 1n} (deployed later)`,
      },
      eur: {
        feed: feeds().usd,
        missing_reason: `the ETH/USD price is missing ${DERIVED}: the feed has no code at block ${deployBlock - 1n} (deployed later)`,
      },
    })
    expect((await readPriceFeeds(client, 31337, feeds(), deployBlock)).usd).toEqual({
      feed: feeds().usd,
      missing_reason: `the feed reverted at block ${deployBlock}: No data present`,
    })
    // ETH / USD set, EUR / USD not yet: EUR is missing, naming EUR / USD
    const usdOnly = await chain.mine([update(chain.deployment.contracts.usdPriceFeed, 312_345_678_901n)])
    expect((await readPriceFeeds(client, 31337, feeds(), usdOnly.number)).eur).toEqual({
      feed: feeds().eurUsd,
      missing_reason: `the EUR/USD price is missing ${DERIVED}: the feed reverted at block ${usdOnly.number}: No data present`,
    })
    const block = await chain.mine([update(chain.deployment.contracts.eurPriceFeed, 108_700_000n)])
    const ethUsd = {
      feed: feeds().usd,
      round_id: 1n,
      answer: 312_345_678_901n,
      decimals: 8,
      price_time: new Date(Number(usdOnly.timestamp) * 1000),
    }
    expect(await readPriceFeeds(client, 31337, feeds(), block.number)).toEqual({
      usd: ethUsd,
      eur: {
        eth_usd: ethUsd,
        eur_usd: {
          feed: feeds().eurUsd,
          round_id: 1n,
          answer: 108_700_000n,
          decimals: 8,
          price_time: new Date(Number(block.timestamp) * 1000),
        },
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
    // both missing: ETH / USD is named (it is checked first)
    expect(read.eur).toEqual({
      feed: feeds().usd,
      missing_reason: `the ETH/USD price is missing ${DERIVED}: the feed answered a non-positive price (0) at block ${negative.number}`,
    })
    expect(zero.number).toBeLessThan(negative.number)
    const usdBack = await chain.mine([update(chain.deployment.contracts.usdPriceFeed, 300_000_000_000n)])
    expect((await readPriceFeeds(client, 31337, feeds(), usdBack.number)).eur).toEqual({
      feed: feeds().eurUsd,
      missing_reason: `the EUR/USD price is missing ${DERIVED}: the feed answered a non-positive price (-5) at block ${usdBack.number}`,
    })
  })

  test('behavior: an RPC error is thrown, never stored as a missing price', async () => {
    const head = await client.getBlockNumber()
    // a block the node does not have: the node refuses the call (a permanent error, not a revert)
    await expect(readPriceFeeds(client, 31337, feeds(), head + 1000n)).rejects.toThrow()
    const unreachable = createChainClient({ rpcUrl: 'http://127.0.0.1:9/', timeoutMs: 500 })
    await expect(readPriceFeeds(unreachable, 31337, feeds(), head)).rejects.toThrow()
  }, 60_000)
})
