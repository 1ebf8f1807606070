import { type Address, createPublicClient, http as viemHttp } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { redeemManagerAbi } from '../chain/abi.ts'
import type { DbHandle } from '../db/index.ts'
import { referenceMath } from '../devnet/testing.ts'
import { parseUnits18 } from '../engine/index.ts'
import { http, startTestApi, type TestApi } from './helpers/api.ts'
import { devnetFollower } from './helpers/chain.ts'
import { SHORT_VERSIONED_HISTORY, startTestDevnet, type TestDevnet } from './helpers/devnet.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()

type Redeem = Record<string, string | number>
type Info = { total_amount_redeem_queue_lseth: string; total_amount_withdrawal_stack_lseth: string }

/**
 * Point-in-time redemption reads (`as_of_block`, `as_of_date`) against a replay of the devnet chain: every
 * RedeemManager read is an eth_call at the asked block (anvil keeps historical state).
 */
describe.runIf(pgOk)('redemption reads as of a block or a date', () => {
  let devnet: TestDevnet
  let dbh: DbHandle
  let api: TestApi
  let finalCount = 0
  let indexedHead = 0n

  beforeAll(async () => {
    devnet = await startTestDevnet('redeems-as-of', {
      // the protocol's versions, from 0.4.0 reports on (redemptions from 1.0.0, day 2)
      ...SHORT_VERSIONED_HISTORY,
      days: 60,
      walletCount: 120,
      startDate: '2026-04-10',
      dayIntervalMs: 0,
      blockIntervalMs: 100,
    })
    dbh = await migratedTestDatabase()
    indexedHead = (await devnetFollower(dbh.db, devnet).syncOnce()).target
    api = await startTestApi('postgres', {}, { dbh })
    finalCount = Number(await read('getRedeemRequestCount', [], indexedHead))
  }, 300_000)
  afterAll(async () => {
    await api?.close()
    await dbh?.close()
    await devnet?.stop()
  })

  // batched JSON-RPC: thousands of historical eth_calls in few round trips
  const client = () =>
    createPublicClient({ transport: viemHttp(devnet.rpcUrl, { batch: { batchSize: 500 } }) })
  const rm = () => devnet.contracts.redeemManager as Address
  // biome-ignore lint/suspicious/noExplicitAny: one helper over the RedeemManager's view functions
  const read = (functionName: string, args: unknown[], blockNumber: bigint): Promise<any> =>
    client().readContract({
      address: rm(),
      abi: redeemManagerAbi,
      // biome-ignore lint/suspicious/noExplicitAny: the name picks the function at run time
      functionName: functionName as any,
      // biome-ignore lint/suspicious/noExplicitAny: as above
      args: args as any,
      blockNumber,
    })
  const anon = () => http(api.url)
  const allIds = () => Array.from({ length: finalCount }, (_, i) => i)

  /** Every request (ids in pages of 500) as the API answers with `query`. */
  async function apiRequests(query: string): Promise<Redeem[]> {
    const out: Redeem[] = []
    const ids = allIds()
    for (let i = 0; i < ids.length; i += 500) {
      const res = await anon()('GET', `/eth/v1/redeems?ids=${ids.slice(i, i + 500).join(',')}&${query}`)
      expect(res.status, query).toBe(200)
      out.push(...res.body)
    }
    return out
  }

  /**
   * Replays the RedeemManager at `block` with eth_calls and checks the API's answers for every request and
   * for redeems_info: ids present = ids created by then; resolveRedeemRequests; the request's on-chain
   * amount, height and maxRedeemableEth (creation values minus claims); owner; claimable amounts from the
   * reference claim walk over the chain's withdrawal stack at that block; the statuses; the totals.
   */
  async function expectEqualsChainAt(block: bigint, requests: Redeem[], info: Info): Promise<void> {
    const label = `block ${block}`
    // before the RedeemManager was deployed there is nothing to read
    const deployed = ((await client().getCode({ address: rm(), blockNumber: block })) ?? '0x') !== '0x'
    const count = deployed ? Number(await read('getRedeemRequestCount', [], block)) : 0
    const eventCount = deployed ? Number(await read('getWithdrawalEventCount', [], block)) : 0
    expect(
      requests.map((r) => r.id),
      label,
    ).toEqual(Array.from({ length: count }, (_, i) => i))
    const ids = Array.from({ length: count }, (_, i) => i)
    const [resolved, details, events] = await Promise.all([
      count === 0 ? [] : (read('resolveRedeemRequests', [ids], block) as Promise<readonly bigint[]>),
      Promise.all(ids.map((id) => read('getRedeemRequestDetails', [id], block))),
      Promise.all(
        Array.from({ length: eventCount }, (_, i) => read('getWithdrawalEventDetails', [i], block)),
      ),
    ])
    const stackEnd = events.length === 0 ? 0n : events[eventCount - 1].height + events[eventCount - 1].amount
    for (const r of requests) {
      const id = Number(r.id)
      const at = `${label}, request ${id}`
      const d = details[id]
      const total = parseUnits18(String(r.total_amount_lseth))
      const claimed = parseUnits18(String(r.claimed_amount_lseth))
      expect(r.withdrawal_event_id, at).toBe(Number(resolved[id]))
      expect(r.owner, at).toBe(d.recipient.toLowerCase())
      expect(total - claimed, at).toBe(d.amount)
      expect(parseUnits18(String(r.height)) + claimed, at).toBe(d.height)
      expect(
        parseUnits18(String(r.max_redeemable_amount_eth)) - parseUnits18(String(r.claimed_amount_eth)),
        at,
      ).toBe(d.maxRedeemableEth)
      const first = events.findIndex(
        (we: { height: bigint; amount: bigint }) => we.height <= d.height && d.height < we.height + we.amount,
      )
      const walk = d.amount === 0n || first < 0 ? { steps: [] } : referenceMath.claimWalk(d, events, first)
      const sum = (k: 'matched' | 'eth') => walk.steps.reduce((s, step) => s + step[k], 0n)
      expect(parseUnits18(String(r.claimable_amount_lseth)), at).toBe(sum('matched'))
      expect(parseUnits18(String(r.claimable_amount_eth)), at).toBe(sum('eth'))
      const end = d.height + d.amount
      expect(r.status_claim, at).toBe(
        d.amount === 0n ? 'FULLY_CLAIMED' : claimed === 0n ? 'NOT_CLAIMED' : 'PARTIALLY_CLAIMED',
      )
      expect(r.status_satisfaction, at).toBe(
        d.amount === 0n || stackEnd >= end
          ? 'FULLY_SATISFIED'
          : stackEnd > d.height
            ? 'PARTIALLY_SATISFIED'
            : 'PENDING_SATISFACTION',
      )
    }
    const last = details[count - 1]
    expect(parseUnits18(info.total_amount_redeem_queue_lseth), label).toBe(
      last ? last.height + last.amount : 0n,
    )
    expect(parseUnits18(info.total_amount_withdrawal_stack_lseth), label).toBe(stackEnd)
  }

  async function infoAt(query: string): Promise<Info> {
    const res = await anon()('GET', `/eth/v1/redeems_info?${query}`)
    expect(res.status, query).toBe(200)
    return res.body
  }

  test('behavior: as_of_block equals the chain replayed at every redeem event block and the block before it', async () => {
    const logs = await client().getLogs({
      address: rm(),
      fromBlock: devnet.deployBlock,
      toBlock: indexedHead,
    })
    const eventBlocks = [...new Set(logs.map((l) => l.blockNumber as bigint))]
    expect(eventBlocks.length).toBeGreaterThan(10)
    const blocks = [...new Set(eventBlocks.flatMap((b) => [b - 1n, b]).concat([indexedHead]))].sort((a, b) =>
      a < b ? -1 : a > b ? 1 : 0,
    )
    const seen = new Set<string>()
    for (const block of blocks) {
      const requests = await apiRequests(`as_of_block=${block}`)
      await expectEqualsChainAt(block, requests, await infoAt(`as_of_block=${block}`))
      for (const r of requests) seen.add(`${r.status_claim}/${r.status_satisfaction}`)
    }
    // the history passes through every kind of state, so the comparison is not vacuous
    expect(seen.size).toBeGreaterThanOrEqual(6)
    expect(seen).toContain('FULLY_CLAIMED/FULLY_SATISFIED')
    // without as_of the answer is the indexed head's
    expect(await apiRequests('display_eth=true')).toEqual(await apiRequests(`as_of_block=${indexedHead}`))
  }, 120_000)

  test('behavior: as_of_date answers as the last block of that UTC day', async () => {
    const c = client()
    const timeOf = async (n: bigint) => (await c.getBlock({ blockNumber: n })).timestamp
    /** The last block whose timestamp is <= `limit` (binary search; blocks are in time order). */
    async function lastBlockUpTo(limit: bigint): Promise<bigint> {
      let low = devnet.deployBlock
      let high = indexedHead
      while (low < high) {
        const mid = (low + high + 1n) / 2n
        if ((await timeOf(mid)) <= limit) low = mid
        else high = mid - 1n
      }
      return low
    }
    const firstDay =
      Number(await timeOf(devnet.deployBlock)) - (Number(await timeOf(devnet.deployBlock)) % 86_400)
    const headTime = Number(await timeOf(indexedHead))
    const dates: string[] = []
    for (let t = firstDay; t <= headTime; t += 86_400)
      dates.push(new Date(t * 1000).toISOString().slice(0, 10))
    expect(dates.length).toBeGreaterThan(55)
    for (const date of dates) {
      const endOfDay = BigInt(Date.parse(`${date}T23:59:59Z`) / 1000)
      const block = await lastBlockUpTo(endOfDay)
      const byDate = await apiRequests(`as_of_date=${date}`)
      expect(byDate, date).toEqual(await apiRequests(`as_of_block=${block}`))
      const info = await infoAt(`as_of_date=${date}`)
      expect(info, date).toEqual(await infoAt(`as_of_block=${block}`))
      await expectEqualsChainAt(block, byDate, info)
    }
  }, 90_000)

  test('behavior: one request by idx, v0 forms, and a request that did not exist yet is 404', async () => {
    const id = finalCount - 1
    const created = (await anon()('GET', `/eth/v1/redeems/${id}`)).body
    const createdAt = (
      await client().getLogs({
        address: rm(),
        event: redeemManagerAbi[0],
        fromBlock: devnet.deployBlock,
        toBlock: indexedHead,
      })
    ).find((l) => l.args.id === id)?.blockNumber as bigint
    expect(createdAt).toBeDefined()
    const at = (await anon()('GET', `/eth/v1/redeems/${id}?as_of_block=${createdAt}`)).body
    const [listed] = await apiRequests(`as_of_block=${createdAt}`).then((l) => l.filter((r) => r.id === id))
    expect(at).toEqual(listed)
    expect(at.owner).toBe(created.owner)
    const before = await anon()('GET', `/eth/v1/redeems/${id}?as_of_block=${createdAt - 1n}`)
    expect([before.status, before.body.status]).toEqual([404, 'IR3400'])
    expect(before.body.message).toContain(`as_of_block ${createdAt - 1n}`)
    const ownerList = await anon()(
      'GET',
      `/eth/v1/redeems?owner=${created.owner}&as_of_block=${createdAt - 1n}`,
    )
    expect(ownerList.body.map((r: Redeem) => r.id)).not.toContain(id)

    // v0 forms: the same state in v0 fields
    const v0 = await anon()('GET', `/eth/v0/redeems/${id}?as_of_block=${createdAt}`)
    expect(v0.status).toBe(200)
    const { claimed_amount_eth, claimable_amount_eth, timestamp, ...v0Fields } = at
    expect(v0.body).toEqual(v0Fields)
    const v0List = await anon()('GET', `/eth/v0/redeems?owner=${created.owner}&as_of_block=${createdAt}`)
    expect(v0List.body.map((r: Redeem) => r.id)).toContain(id)
    const v0Before = await anon()('GET', `/eth/v0/redeems/${id}?as_of_block=${createdAt - 1n}`)
    expect([v0Before.status, v0Before.body.status]).toEqual([404, 'IR3400'])
    expect((await anon()('GET', `/eth/v0/redeems_info?as_of_block=${createdAt}`)).body).toEqual(
      await infoAt(`as_of_block=${createdAt}`),
    )
    // before the contracts existed: nothing at all
    expect(await infoAt(`as_of_block=0`)).toEqual({
      total_amount_redeem_queue_lseth: '0',
      total_amount_withdrawal_stack_lseth: '0',
    })
  })

  test('behavior: both parameters, malformed values, and points past the indexed head are 400', async () => {
    const headDate = new Date(
      Number((await client().getBlock({ blockNumber: indexedHead })).timestamp) * 1000,
    )
      .toISOString()
      .slice(0, 10)
    const nextDay = new Date(Date.parse(`${headDate}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
    for (const path of [
      '/eth/v1/redeems?ids=0&',
      '/eth/v1/redeems/0?',
      '/eth/v1/redeems_info?',
      '/eth/v0/redeems_info?',
    ]) {
      for (const [query, mentions] of [
        [`as_of_block=${indexedHead}&as_of_date=${headDate}`, 'not both'],
        ['as_of_block=abc', 'as_of_block'],
        ['as_of_block=-1', 'as_of_block'],
        ['as_of_block=0x10', 'as_of_block'],
        ['as_of_block=', 'as_of_block'],
        ['as_of_block=123456789012345678901', 'as_of_block'],
        ['as_of_date=2026-02-30', 'as_of_date'],
        ['as_of_date=20260501', 'as_of_date'],
        [`as_of_block=${indexedHead + 1n}`, `indexed head ${indexedHead}`],
        [`as_of_date=${nextDay}`, `indexed head's date ${headDate}`],
      ] as const) {
        const res = await anon()('GET', `${path}${query}`)
        expect([res.status, res.body.status], `${path}${query}`).toEqual([400, 'IR1000'])
        expect(res.body.message, `${path}${query}`).toContain(mentions)
      }
    }
    const v0 = await anon()('GET', `/eth/v0/redeems/0?as_of_block=${indexedHead + 1n}`)
    expect([v0.status, v0.body.status]).toEqual([400, 'IR1000'])
    const v0List = await anon()('GET', `/eth/v0/redeems?owner=0x${'1'.repeat(40)}&as_of_date=${nextDay}`)
    expect([v0List.status, v0List.body.status]).toEqual([400, 'IR1000'])
    // the head's own date is accepted
    expect((await anon()('GET', `/eth/v1/redeems_info?as_of_date=${headDate}`)).status).toBe(200)
  })

  test('behavior: a block mined but not yet ingested is refused until the follower has it', async () => {
    const rpc = (method: string) =>
      fetch(devnet.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }),
      })
    await rpc('evm_mine')
    const chainHead = await client().getBlockNumber()
    expect(chainHead).toBeGreaterThan(indexedHead)
    const refused = await anon()('GET', `/eth/v1/redeems_info?as_of_block=${chainHead}`)
    expect([refused.status, refused.body.status]).toEqual([400, 'IR1000'])
    expect(refused.body.message).toContain(`indexed head ${indexedHead}`)
    const synced = (await devnetFollower(dbh.db, devnet).syncOnce()).target
    expect(synced).toBeGreaterThanOrEqual(chainHead)
    expect(await infoAt(`as_of_block=${chainHead}`)).toEqual(await infoAt(`as_of_block=${indexedHead}`))
  })
})
