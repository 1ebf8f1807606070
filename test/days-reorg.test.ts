import { type Address, parseEther } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { riverAbi } from '../chain/abi.ts'
import { createLogger } from '../common/logger.ts'
import type { Db } from '../db/index.ts'
import * as reportTxStateMigration from '../db/migrations/006_report_tx_state.ts'
import { createRepos } from '../db/repos/index.ts'
import { riverCall, startTestChain, type TestChain } from '../devnet/testing.ts'
import { ABANDONED_RUN_MS, scheduleDays } from '../jobs/days/scheduler.ts'
import type { Flow } from '../jobs/runner.ts'
import { type TestChainService, testChainService } from './helpers/days.ts'
import { dayStatuses, recordsHash, verifyRecordsAgainstChain } from './helpers/records.ts'
import { readReportPosition } from './helpers/report-chain.ts'
import { postgresAvailable } from './helpers/services.ts'
import { reportSequence } from './helpers/test-reports.ts'

const pgOk = await postgresAvailable()
const ETH = 10n ** 18n
const silent = createLogger({ level: 'silent' })

/**
 * Days by hand on a bare devnet chain: three reports, then reorgs that re-mine the last report on another
 * branch and that remove reports; and a day whose stored data is inconsistent.
 */
describe.runIf(pgOk)('daily records across reorgs and bad data (Postgres, anvil)', () => {
  let chain: TestChain
  const services: TestChainService[] = []
  const alice: Address = '0x00000000000000000000000000000000000a11ce'
  const bob: Address = '0x0000000000000000000000000000000000000b0b'
  const carol: Address = '0x000000000000000000000000000000000000ca01'
  // reports of epochs well before the chain's time (a report may not come from the future)
  const reportInput = reportSequence()
  const report = (validatorsBalance: bigint, sameEpoch = false) =>
    chain.report(reportInput(validatorsBalance, sameEpoch))
  const transfer = (from: Address, to: Address, value: bigint) =>
    chain.mine([chain.riverTx(from, riverCall.transfer(to, value))])

  /** A database following the chain, with the day jobs on an inline runner. */
  async function service() {
    const s = await testChainService(chain)
    services.push(s)
    return s
  }
  const holders = () => [alice, bob, carol, chain.deployment.roles.collector]
  const verify = (db: Db) =>
    verifyRecordsAgainstChain(db, {
      rpcUrl: chain.anvil.rpcUrl,
      river: chain.deployment.contracts.river,
      holders: holders(),
    })

  beforeAll(async () => {
    chain = await startTestChain({
      startDate: '2026-04-20',
      stake: {
        deposits: [
          [alice, 100n * ETH],
          [bob, 60n * ETH],
        ],
        others: [carol],
      },
    })
    await report(128n * ETH + parseEther('0.1'))
    await transfer(alice, carol, 10n * ETH)
  }, 120_000)
  afterAll(async () => {
    for (const s of services) await s.close()
    await chain?.stop()
  })

  test('behavior: a reorg that re-mines a report or removes reports recomputes the affected days', async () => {
    const beforeReport2 = await chain.testClient.snapshot()
    await report(128n * ETH + parseEther('0.2'))
    const beforeReport3 = await chain.testClient.snapshot()
    // branch A
    await transfer(bob, carol, 5n * ETH)
    await report(128n * ETH + parseEther('0.3'))
    await chain.mine([])
    const live = await service()
    await live.sync()
    await live.compute()
    expect((await dayStatuses(live.db)).map((d) => d.status)).toEqual(['computed', 'computed', 'computed'])
    const [, , dayA] = await createRepos(live.db).days.list(chain.anvil.chainId)
    const hashA = dayA?.content_hash

    // branch B: the third report (same epoch) re-mined after another transfer, with other rewards
    await chain.revert(beforeReport3)
    await transfer(carol, alice, 1n * ETH)
    await report(128n * ETH + parseEther('0.25'), true)
    await chain.mine([])
    await chain.mine([])
    const synced = (await live.sync()) as { rolledBackFrom?: bigint }
    expect(synced.rolledBackFrom).toBeDefined()
    await live.compute()
    const days = await createRepos(live.db).days.list(chain.anvil.chainId)
    expect(days.map((d) => d.status)).toEqual(['computed', 'computed', 'computed'])
    expect(days[2]?.content_hash).not.toBe(hashA)
    expect(days[2]?.visible_version).toBe(2)
    await verify(live.db)
    const fresh = await service()
    await fresh.sync()
    await fresh.compute()
    expect(await recordsHash(live.db)).toBe(await recordsHash(fresh.db))

    // branch C: back before the second report; the chain moves on without reports
    await chain.revert(beforeReport2)
    for (let i = 0; i < 4; i++) await chain.mine([])
    await live.sync()
    await live.compute()
    expect(await dayStatuses(live.db)).toHaveLength(1)
    expect(await live.db('wallet_records').countDistinct({ n: 'report_epoch' }).first()).toEqual({ n: '1' })
    await verify(live.db)
  }, 180_000)

  test('behavior: a day whose stored data is inconsistent fails naming its report; nothing of it is visible; later days wait', async () => {
    await report(128n * ETH + parseEther('0.2'))
    await transfer(bob, carol, 5n * ETH)
    await report(128n * ETH + parseEther('0.3'))
    const s = await service()
    await s.sync()
    // corrupt the period of the second report: alice's transfer becomes larger than her balance
    const reports = await s.db('oracle_reports').orderBy('block_number').select('block_number', 'epoch')
    expect(reports.length).toBe(3)
    const moved = await s
      .db('lseth_transfers')
      .where({ from_address: alice.toLowerCase() })
      .where('block_number', '<', reports[1].block_number)
      .update({ value: (1_000n * ETH).toString() })
    expect(moved).toBe(1)
    await expect(s.compute()).rejects.toThrow()
    const days = await dayStatuses(s.db)
    // the transfer is in the second report's period
    expect(days.map((d) => d.status)).toEqual(['computed', 'failed', 'pending'])
    expect(days[1]?.error).toContain(`report epoch ${reports[1].epoch} (block ${reports[1].block_number})`)
    expect(days[1]?.error).toContain('negative')
    expect(await s.db('wallet_records').distinct('report_epoch').pluck('report_epoch')).toEqual([
      reports[0].epoch,
    ])
    // more scheduling passes change nothing: later days wait for the failed one
    const runner = (services.at(-1) as TestChainService).runner
    for (let i = 0; i < 3; i++) await runner.enqueue('days', {}, { jobId: `wait-${i}` })
    await runner.idle()
    expect((await dayStatuses(s.db)).map((d) => d.status)).toEqual(['computed', 'failed', 'pending'])
    // repaired data and a retry (what `lsreport backfill` does for failed days) complete every day
    await s
      .db('lseth_transfers')
      .where({ from_address: alice.toLowerCase() })
      .where('block_number', '<', reports[1].block_number)
      .update({ value: (10n * ETH).toString() })
    await s.db('days').where({ status: 'failed' }).update({ status: 'pending' })
    await s.compute()
    await verify(s.db)
  }, 120_000)

  test('behavior: a report sharing its block with transfers, a deposit and a fee change before and after it computes at its own transaction', async () => {
    const { roles, contracts } = chain.deployment
    const feeBefore = await chain.publicClient.readContract({
      address: contracts.river,
      abi: riverAbi,
      functionName: 'getGlobalFee',
    })
    // eth_call sees the block's end: the deposit, the transfer and the fee change after the report are not its
    const shared = await chain.mine(
      [
        chain.riverTx(alice, riverCall.transfer(bob, 2n * ETH)),
        chain.reportTx(reportInput(128n * ETH + parseEther('0.4'))),
        chain.riverTx(bob, riverCall.deposit(), 40n * ETH),
        chain.riverTx(carol, riverCall.transfer(alice, 1n * ETH)),
        chain.riverTx(roles.admin, riverCall.setGlobalFee(feeBefore + 500n)),
      ],
      3600n,
    )
    expect(shared.receipts.map((r) => r.status)).toEqual(['0x1', '0x1', '0x1', '0x1', '0x1'])
    await transfer(bob, carol, 3n * ETH)
    await report(128n * ETH + parseEther('0.5'))
    const s = await service()
    await s.sync()
    await s.compute()
    expect((await dayStatuses(s.db)).every((d) => d.status === 'computed')).toBe(true)
    const stored = await s
      .db('oracle_reports')
      .where({ block_number: String(shared.number) })
      .first()
    expect(stored.global_fee_bps).toBe(Number(feeBefore))
    // the pool right after the report transaction, read from the chain independently of the follower
    const position = await readReportPosition(chain.publicClient, contracts.river, shared.number)
    const atBlockEnd = (functionName: 'totalUnderlyingSupply' | 'totalSupply' | 'getGlobalFee') =>
      chain.publicClient.readContract({
        address: contracts.river,
        abi: riverAbi,
        functionName,
        blockNumber: shared.number,
      })
    const blockEnd = await atBlockEnd('totalSupply')
    expect(position.S).not.toBe(blockEnd)
    expect({ U: stored.total_underlying_supply, S: stored.total_supply }).toEqual({
      U: String(position.U),
      S: String(position.S),
    })
    await verify(s.db)

    // a row stored before the follower read at the report's transaction holds the block-end figures: the
    // migration that corrects stored rows gives back the report's own and sends the days from it to pending
    const row = s.db('oracle_reports').where({ block_number: String(shared.number) })
    await row.clone().update({
      total_underlying_supply: String(await atBlockEnd('totalUnderlyingSupply')),
      total_supply: String(blockEnd),
      global_fee_bps: Number(await atBlockEnd('getGlobalFee')),
    })
    await reportTxStateMigration.up(s.db)
    const corrected = await row.clone().first()
    expect(corrected).toEqual(stored)
    const days = await dayStatuses(s.db)
    const sharedDay = days.findIndex((d) => d.report_epoch === String(stored.epoch))
    expect(days.map((d) => d.status)).toEqual(days.map((_, i) => (i < sharedDay ? 'computed' : 'pending')))
    await s.compute()
    await verify(s.db)
  }, 120_000)

  test("behavior: a run started again while the replaced run's flow reaches the queue late computes once, as the new version", async () => {
    const s = await service()
    await s.sync()
    const runner = (services.at(-1) as TestChainService).runner
    const deps = {
      db: s.db,
      chainId: chain.anvil.chainId,
      logger: silent,
      inFlight: (id: string) => runner.has(id),
    }
    let late: Flow | undefined
    const first = await scheduleDays({
      ...deps,
      enqueueFlow: async (flow) => {
        late = flow
      },
    })
    expect(first.started?.version).toBe(1)
    const epoch = first.started?.epoch as string
    // the process that started run 1 stalls past ABANDONED_RUN_MS before its flow reaches the queue ...
    await s
      .db('days')
      .where({ report_epoch: epoch })
      .update({
        started_at: s.db.raw(`clock_timestamp() - interval '${ABANDONED_RUN_MS + 1_000} milliseconds'`),
      })
    // ... so another scheduler starts run 2, and run 1's flow lands just before run 2's
    const second = await scheduleDays({
      ...deps,
      enqueueFlow: async (flow) => {
        await runner.enqueueFlow(late as Flow)
        await runner.enqueueFlow(flow)
      },
    })
    expect(second.started).toMatchObject({ epoch, version: 2 })
    await s.compute()
    expect((await createRepos(s.db).days.get(chain.anvil.chainId, epoch))?.visible_version).toBe(2)
    await verify(s.db)
  }, 120_000)
})
