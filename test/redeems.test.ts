import { type Address, createWalletClient, encodeFunctionData, parseEventLogs, http as viemHttp } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { redeemManagerAbi } from '../chain/abi.ts'
import { createChainClient } from '../chain/client.ts'
import type { DbHandle } from '../db/index.ts'
import { devnetRiverAbi } from '../devnet/abi.ts'
import { formatUnits18, parseUnits18 } from '../engine/index.ts'
import { http, orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { devnetFollower } from './helpers/chain.ts'
import { storeConsensusSnapshot } from './helpers/days.ts'
import { SHORT_VERSIONED_HISTORY, startTestDevnet, type TestDevnet } from './helpers/devnet.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()

describe.runIf(pgOk)('redemption reads against the devnet', () => {
  let devnet: TestDevnet
  let dbh: DbHandle
  let api: TestApi

  beforeAll(async () => {
    devnet = await startTestDevnet('redeems', {
      // the protocol's versions, from 0.4.0 reports on (redemptions from 1.0.0, day 2)
      ...SHORT_VERSIONED_HISTORY,
      days: 35,
      walletCount: 60,
      startDate: '2026-04-10',
      dayIntervalMs: 0,
      blockIntervalMs: 100,
    })
    dbh = await migratedTestDatabase()
    await devnetFollower(dbh.db, devnet).syncOnce()
    // the consensus job stores the devnet's facts: the exit queue of the projections reads them from the database
    await storeConsensusSnapshot(dbh.db, devnet)
    api = await startTestApi('postgres', { DATA_DIR: devnet.dataDir }, { dbh })
  }, 300_000)
  afterAll(async () => {
    await api?.close()
    await dbh?.close()
    await devnet?.stop()
  })

  const chain = () => createChainClient({ rpcUrl: devnet.rpcUrl, chainId: devnet.chainId })
  const rm = () => devnet.contracts.redeemManager as Address

  test('behavior: every request equals the chain: resolveRedeemRequests, current amount, owner; totals match', async () => {
    const count = Number(
      await chain().readContract({
        address: rm(),
        abi: redeemManagerAbi,
        functionName: 'getRedeemRequestCount',
      }),
    )
    expect(count).toBeGreaterThan(5)
    const ids = Array.from({ length: count }, (_, i) => i)
    const res = await http(api.url)('GET', `/eth/v1/redeems?ids=${ids.join(',')}`)
    expect(res.status).toBe(200)
    expect(res.body.map((r: { id: number }) => r.id)).toEqual(ids)
    const resolved = await chain().readContract({
      address: rm(),
      abi: redeemManagerAbi,
      functionName: 'resolveRedeemRequests',
      args: [ids],
    })
    const statuses = new Set<string>()
    for (const [i, r] of (res.body as Record<string, string | number>[]).entries()) {
      const details = await chain().readContract({
        address: rm(),
        abi: redeemManagerAbi,
        functionName: 'getRedeemRequestDetails',
        args: [i],
      })
      expect(r.withdrawal_event_id, `request ${i}`).toBe(Number(resolved[i]))
      expect(
        parseUnits18(String(r.total_amount_lseth)) - parseUnits18(String(r.claimed_amount_lseth)),
        `request ${i}`,
      ).toBe(details.amount)
      expect(r.owner).toBe(details.recipient.toLowerCase())
      const claimable = parseUnits18(String(r.claimable_amount_lseth))
      expect(claimable + parseUnits18(String(r.claimed_amount_lseth))).toBeLessThanOrEqual(
        parseUnits18(String(r.total_amount_lseth)),
      )
      statuses.add(`${r.status_claim}/${r.status_satisfaction}`)
    }
    expect(statuses.size).toBeGreaterThan(1)

    const info = await http(api.url)('GET', '/eth/v1/redeems_info')
    const last = await chain().readContract({
      address: rm(),
      abi: redeemManagerAbi,
      functionName: 'getRedeemRequestDetails',
      args: [count - 1],
    })
    const events = Number(
      await chain().readContract({
        address: rm(),
        abi: redeemManagerAbi,
        functionName: 'getWithdrawalEventCount',
      }),
    )
    const lastEvent = await chain().readContract({
      address: rm(),
      abi: redeemManagerAbi,
      functionName: 'getWithdrawalEventDetails',
      args: [events - 1],
    })
    expect(parseUnits18(info.body.total_amount_redeem_queue_lseth)).toBe(last.height + last.amount)
    expect(parseUnits18(info.body.total_amount_withdrawal_stack_lseth)).toBe(
      lastEvent.height + lastEvent.amount,
    )
    expect((await http(api.url)('GET', '/eth/v0/redeems_info')).body).toEqual(info.body)
  })

  test('behavior: claiming on chain pays exactly the claimable amounts the API showed', async () => {
    const count = Number(
      await chain().readContract({
        address: rm(),
        abi: redeemManagerAbi,
        functionName: 'getRedeemRequestCount',
      }),
    )
    const all = await http(api.url)(
      'GET',
      `/eth/v1/redeems?ids=${Array.from({ length: count }, (_, i) => i).join(',')}`,
    )
    const target = (all.body as Record<string, string | number>[]).find(
      (r) => r.status_claim !== 'FULLY_CLAIMED' && parseUnits18(String(r.claimable_amount_lseth)) > 0n,
    )
    expect(target).toBeDefined()
    const before = target!
    const wallet = createWalletClient({ transport: viemHttp(devnet.rpcUrl) })
    const hash = await wallet.sendTransaction({
      account: before.owner as Address,
      chain: null,
      to: devnet.contracts.river as Address,
      data: encodeFunctionData({
        abi: devnetRiverAbi,
        functionName: 'claimRedeemRequests',
        args: [[Number(before.id)], [Number(before.withdrawal_event_id)]],
      }),
      gas: 2_000_000n,
    })
    const receipt = await chain().waitForTransactionReceipt({ hash, timeout: 30_000, pollingInterval: 100 })
    expect(receipt.status).toBe('success')
    const [claimed] = parseEventLogs({
      abi: redeemManagerAbi,
      logs: receipt.logs,
      eventName: 'ClaimedRedeemRequest',
    })
    expect(claimed?.args.ethAmount).toBe(parseUnits18(String(before.claimable_amount_eth)))
    expect(claimed?.args.lsEthAmount).toBe(parseUnits18(String(before.claimable_amount_lseth)))

    await devnetFollower(dbh.db, devnet).syncOnce()
    const after = await http(api.url)('GET', `/eth/v1/redeems/${before.id}`)
    expect(parseUnits18(after.body.claimed_amount_lseth)).toBe(
      parseUnits18(String(before.claimed_amount_lseth)) + parseUnits18(String(before.claimable_amount_lseth)),
    )
    expect(after.body.claimable_amount_lseth).toBe('0')
  })

  test('behavior: projections explain themselves: case = basis, the inputs, the next report (v1 = v0)', async () => {
    const { token } = await orgWithToken(api, { scopes: 'read:eth-redeems' })
    const call = http(api.url, token)
    const anon = http(api.url)
    const info = (await anon('GET', '/eth/v1/redeems_info')).body
    const stack = parseUnits18(info.total_amount_withdrawal_stack_lseth)
    const queue = (await anon('GET', '/eth/v1/validators/queue')).body
    // the engine's inputs, read independently: the two latest reports and the chain's clock
    const [latest, previous] = await dbh
      .db('oracle_reports')
      .orderBy([
        { column: 'block_number', order: 'desc' },
        { column: 'log_index', order: 'desc' },
      ])
      .limit(2)
    const head = await dbh.db('chain_heads').max('time as t').first()
    const now = Math.floor(new Date(head?.t as Date).getTime() / 1000)
    const lastReport = Math.floor(new Date(latest.block_time).getTime() / 1000)
    const skimmed = BigInt(latest.validators_skimmed_balance) - BigInt(previous.validators_skimmed_balance)
    const skims = (skimmed > 0n ? skimmed : 0n) + BigInt(latest.trace_pulled_el_fees)
    const nextReport = lastReport + (Math.floor((now - lastReport) / 86_400) + 1) * 86_400
    const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z')
    const rate = (lseth: bigint) =>
      (lseth * BigInt(latest.total_underlying_supply)) / BigInt(latest.total_supply)

    const requests = (await anon('GET', '/eth/v1/redeems?ids=0,1,2,3,4,5,6,7,8,9,10,11')).body as {
      id: number
      height: string
      total_amount_lseth: string
    }[]
    expect(requests.length).toBeGreaterThan(5)
    const cases = new Set<string>()
    let previousAt = 0
    for (const r of requests) {
      const res = await call('GET', `/eth/v1/redeems/${r.id}/projection`)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const { explanation } = res.body
      cases.add(explanation.case)
      expect(explanation.case, `request ${r.id}`).toBe(res.headers.get('x-projection-basis'))
      const position = parseUnits18(r.height) + parseUnits18(r.total_amount_lseth)
      const shortfall = position > stack ? position - stack : 0n
      expect(explanation.inputs).toEqual({
        queue_position_lseth: formatUnits18(position),
        withdrawal_stack_lseth: info.total_amount_withdrawal_stack_lseth,
        shortfall_lseth: formatUnits18(shortfall),
        shortfall_eth: formatUnits18(rate(shortfall)),
        redeem_buffer_eth: '0',
        expected_daily_skims_eth: formatUnits18(skims),
        exit_queue: explanation.case === 'exit_queue' ? queue : null,
      })
      expect(explanation.next_calculation_at).toBe(iso(nextReport))
      const at = Date.parse(res.body.projected_redeemable_at) / 1000
      if (explanation.case === 'satisfied') expect(shortfall).toBe(0n)
      if (explanation.case === 'buffer') {
        expect(rate(shortfall) <= skims).toBe(true)
        expect(res.body.projected_redeemable_at).toBe(explanation.next_calculation_at)
      }
      if (explanation.case === 'exit_queue') {
        expect(rate(shortfall) > skims).toBe(true)
        expect(at).toBeGreaterThanOrEqual(nextReport)
      }
      // requests are in queue order: a later one is never projected earlier
      expect(at).toBeGreaterThanOrEqual(previousAt)
      previousAt = at
      expect((await call('GET', `/eth/v0/redeems/${r.id}/projection`)).body).toEqual(res.body)
    }
    expect(cases).toContain('satisfied')
    expect([...cases].some((c) => c !== 'satisfied')).toBe(true)

    const manager = await call('GET', '/eth/v1/redeems_info/projection')
    expect(manager.status, JSON.stringify(manager.body)).toBe(200)
    const end = parseUnits18(info.total_amount_redeem_queue_lseth)
    expect(manager.body.explanation).toMatchObject({
      case: manager.headers.get('x-projection-basis'),
      inputs: {
        queue_position_lseth: info.total_amount_redeem_queue_lseth,
        shortfall_lseth: formatUnits18(end > stack ? end - stack : 0n),
      },
      next_calculation_at: iso(nextReport),
    })
    expect((await call('GET', '/eth/v0/redeems_info/projection')).body).toEqual(manager.body)
  })

  test('behavior: filters, display_eth, v0 shape and errors', async () => {
    const anon = http(api.url)
    const first = (await anon('GET', '/eth/v1/redeems/0')).body
    const byOwner = await anon('GET', `/eth/v1/redeems?owner=${first.owner}`)
    expect(byOwner.body.every((r: { owner: string }) => r.owner === first.owner)).toBe(true)
    const both = await anon('GET', `/eth/v1/redeems?owner=${first.owner}&ids=0,999999`)
    expect(both.body.map((r: { id: number }) => r.id)).toEqual([0])
    const hidden = await anon('GET', '/eth/v1/redeems/0?display_eth=false')
    expect(hidden.body.claimable_amount_eth).toBeUndefined()
    expect(hidden.body.claimed_amount_eth).toBeDefined()
    const v0 = await anon('GET', '/eth/v0/redeems/0')
    expect(Object.keys(v0.body).sort()).toEqual(
      [
        'id',
        'owner',
        'height',
        'total_amount_lseth',
        'claimed_amount_lseth',
        'claimable_amount_lseth',
        'max_redeemable_amount_eth',
        'withdrawal_event_id',
        'requested_at',
        'status_claim',
        'status_satisfaction',
      ].sort(),
    )
    expect((await anon('GET', `/eth/v0/redeems?owner=${first.owner}`)).body.length).toBe(byOwner.body.length)
    for (const [url, status, code] of [
      ['/eth/v1/redeems', 400, 'IR1000'],
      ['/eth/v1/redeems?ids=abc', 400, 'IR1000'],
      [`/eth/v1/redeems?ids=${Array.from({ length: 501 }, (_, i) => i).join(',')}`, 400, 'IR1006'],
      ['/eth/v1/redeems?owner=0x123', 400, 'IR3101'],
      ['/eth/v1/redeems/999999', 404, 'IR3400'],
      ['/eth/v1/redeems/abc', 400, 'IR1000'],
      ['/eth/v0/redeems', 400, 'IR1000'],
    ] as const) {
      const res = await anon('GET', url)
      expect([res.status, res.body.status], url).toEqual([status, code])
    }
  })
})
