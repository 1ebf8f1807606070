import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { allowlistAbi, PERMISSION, redeemManagerAbi, riverAbi } from '../chain/abi.ts'
import { createChainClient } from '../chain/client.ts'
import type { DbHandle } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { devnetFollower, dumpEvents } from './helpers/chain.ts'
import { SHORT_VERSIONED_HISTORY, startTestDevnet, type TestDevnet } from './helpers/devnet.ts'
import { startRpcProxy } from './helpers/rpc-proxy.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const DAYS = 35

describe.runIf(pgOk)('chain follower on the devnet (Postgres)', () => {
  let devnet: TestDevnet
  const handles: DbHandle[] = []
  const freshDb = async () => {
    const dbh = await migratedTestDatabase()
    handles.push(dbh)
    return dbh
  }

  beforeAll(async () => {
    devnet = await startTestDevnet('follower', {
      // the protocol's versions (0.4.0 reports and allow with indexed accounts, 0.5.0, 1.0.0, 1.2.1 from day 3),
      // and under 1.2.1 a deny (day 10) lifted on day 20
      ...SHORT_VERSIONED_HISTORY,
      simulator: { denyDay: 10, undenyDay: 20 },
      days: DAYS,
      walletCount: 60,
      startDate: '2026-04-10',
      dayIntervalMs: 0,
      blockIntervalMs: 100,
    })
  }, 300_000)
  afterAll(async () => {
    await devnet?.stop()
    for (const h of handles) await h.close()
  })

  test('behavior: ingests 30+ days; every balance equals balanceOf and every report rate equals U/S on chain', async () => {
    const { db } = await freshDb()
    const follower = devnetFollower(db, devnet)
    const first = await follower.syncOnce()
    const client = createChainClient({ rpcUrl: devnet.rpcUrl, chainId: devnet.chainId })
    const repos = createRepos(db)

    const reports = await repos.chain.oracleReports(devnet.chainId)
    const simulated = devnet.simulator.state().reports
    expect(reports.length).toBe(simulated.length)
    expect(reports.length).toBeGreaterThanOrEqual(30)
    for (const [i, row] of reports.entries()) {
      const block = BigInt(row.block_number)
      const [u, s] = await Promise.all([
        client.readContract({
          address: devnet.contracts.river as Address,
          abi: riverAbi,
          functionName: 'totalUnderlyingSupply',
          blockNumber: block,
        }),
        client.readContract({
          address: devnet.contracts.river as Address,
          abi: riverAbi,
          functionName: 'totalSupply',
          blockNumber: block,
        }),
      ])
      expect([row.total_underlying_supply, row.total_supply]).toEqual([u.toString(), s.toString()])
      const sim = simulated[i]!
      expect(row.report_date).toBeInstanceOf(Date)
      expect((row.report_date as Date).toISOString().slice(0, 10)).toBe(sim.date)
      expect(row.fee_shares).toBe(sim.feeShares.toString())
      expect(row.global_fee_bps).toBe(Number(sim.globalFee))
    }
    const dates = reports.map((r) => (r.report_date as Date).toISOString().slice(0, 10))
    expect(dates[0]! < '2026-05-01' && dates.at(-1)! > '2026-05-01').toBe(true)
    expect(reports.some((r) => r.fee_shares === '0')).toBe(true) // the loss day
    expect(new Set(reports.map((r) => r.global_fee_bps)).size).toBeGreaterThan(1) // the fee change

    const balances = await repos.chain.balances(devnet.chainId)
    expect(balances.size).toBeGreaterThan(10)
    const holders = new Set([
      ...balances.keys(),
      ...devnet.simulator.state().wallets.map((w) => w.address.toLowerCase()),
    ])
    for (const address of holders) {
      const onChain = await client.readContract({
        address: devnet.contracts.river as Address,
        abi: riverAbi,
        functionName: 'balanceOf',
        args: [address as Address],
        blockNumber: first.target,
      })
      expect(balances.get(address) ?? 0n, address).toBe(onChain)
    }
    const requestCount = await client.readContract({
      address: devnet.contracts.redeemManager as Address,
      abi: redeemManagerAbi,
      functionName: 'getRedeemRequestCount',
      blockNumber: first.target,
    })
    expect(await repos.chain.count('redeem_requests', devnet.chainId)).toBe(Number(requestCount))
    expect(await repos.chain.count('withdrawal_events', devnet.chainId)).toBeGreaterThan(0)
    expect(await repos.chain.count('redeem_claims', devnet.chainId)).toBeGreaterThan(0)

    // reports of both shapes; the Allowlist as the chain stores it: every address's latest stored permissions
    // equal getPermissions, through 0.4.0's indexed logs (accounts from allow's calldata), 0.5.0 and 1.2.1's
    // deny and its lift
    expect((await db('oracle_reports').distinct('report_shape').pluck('report_shape')).sort()).toEqual([
      'legacy',
      'v1',
    ])
    const v05 = devnet.implementations.allowlist.find((i) => i.version === '0.5.0')?.block
    expect(typeof v05).toBe('bigint') // mined
    const early = await db('allowlist_permissions').where('block_number', '<', String(v05)).count('* as n')
    expect(Number(early[0]?.n)).toBeGreaterThan(0) // recovered from the 0.4.0 calldata
    const latest = await db.raw(
      `select distinct on (address) address, permissions::text as permissions from allowlist_permissions
       where chain_id = ? order by address, block_number desc, log_index desc, position desc`,
      [devnet.chainId],
    )
    expect(latest.rows.length).toBeGreaterThan(10)
    for (const row of latest.rows as { address: Address; permissions: string }[]) {
      const stored = await client.readContract({
        address: devnet.contracts.allowlist as Address,
        abi: allowlistAbi,
        functionName: 'getPermissions',
        args: [row.address],
        blockNumber: first.target,
      })
      expect(row.permissions, row.address).toBe(stored.toString())
    }
    const denied = await db('allowlist_permissions').where('permissions', PERMISSION.DENY.toString()).first()
    expect(denied).toBeDefined()
    const lifted = await db('allowlist_permissions')
      .where({ address: denied.address, permissions: '0' })
      .where('block_number', '>', denied.block_number)
    expect(lifted.length).toBeGreaterThan(0)

    // a second pass adds nothing
    const before = await dumpEvents(db)
    const again = await follower.syncOnce()
    expect(again.inserted).toEqual({})
    expect(await dumpEvents(db)).toEqual(before)
  })

  test("behavior: the logs' blockTimestamp spares the block header reads; a node without it gives the same rows", async () => {
    const proxy = await startRpcProxy({ upstream: devnet.rpcUrl })
    try {
      const withTimes = await freshDb()
      await devnetFollower(withTimes.db, devnet, proxy.url).syncOnce()
      // only the head's, and a chunk's last block when no log of it carries its time
      const headerReads = proxy.stats.byMethod.eth_getBlockByNumber ?? 0
      proxy.resetStats()
      proxy.updateFaults({ stripLogTimestamps: true })
      const withoutTimes = await freshDb()
      await devnetFollower(withoutTimes.db, devnet, proxy.url).syncOnce()
      const logBlocks = await withoutTimes.db('chain_blocks').count<{ n: string }[]>('* as n')
      expect(headerReads * 10).toBeLessThan(Number(logBlocks[0]?.n))
      expect(proxy.stats.byMethod.eth_getBlockByNumber ?? 0).toBeGreaterThanOrEqual(Number(logBlocks[0]?.n))
      expect(await dumpEvents(withTimes.db)).toEqual(await dumpEvents(withoutTimes.db))
      const blocks = (db: DbHandle['db']) =>
        db('chain_blocks').select('number', 'hash', 'time').orderBy('number')
      expect(await blocks(withTimes.db)).toEqual(await blocks(withoutTimes.db))
    } finally {
      await proxy.stop()
    }
  })

  test('behavior: through an RPC proxy that drops, errors and range-limits requests, the result is identical', async () => {
    const direct = await freshDb()
    await devnetFollower(direct.db, devnet).syncOnce()
    const proxy = await startRpcProxy({
      upstream: devnet.rpcUrl,
      seed: 7,
      faults: { dropRate: 0.15, httpErrorRate: 0.1, dropResponseRate: 0.05, maxLogsRange: 40 },
    })
    try {
      const faulty = await freshDb()
      await devnetFollower(faulty.db, devnet, proxy.url).syncOnce()
      expect(proxy.stats.dropped + proxy.stats.httpErrors).toBeGreaterThan(0)
      expect(await dumpEvents(faulty.db)).toEqual(await dumpEvents(direct.db))
    } finally {
      await proxy.stop()
    }
  })
})
