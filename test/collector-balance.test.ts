import { type Address, createPublicClient, http, parseAbi } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { riverAbi } from '../chain/abi.ts'
import { ZERO_ADDRESS } from '../common/address.ts'
import type { DbHandle } from '../db/index.ts'
import { syncAndCompute } from './helpers/days.ts'
import { SHORT_VERSIONED_HISTORY, startTestDevnet, type TestDevnet } from './helpers/devnet.ts'
import { floorDiv, verifyRecordsAgainstChain } from './helpers/records.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const DAYS = 16

/** River's fee recipient, read from the chain (not from the service's configuration). */
const collectorAbi = parseAbi(['function getCollector() view returns (address)'])

/**
 * The balance of a wallet whose LsETH the report transaction itself moves (the collector's fee mint, the
 * RedeemManager's shares burned by the withdrawal event) is its balance at the END of the report transaction:
 * `balanceOf` at the report block, read with viem, independently of the service.
 */
describe.runIf(pgOk)('balances at the end of the report transaction (Postgres, anvil)', () => {
  let devnet: TestDevnet
  let dbh: DbHandle

  beforeAll(async () => {
    devnet = await startTestDevnet('collector-balance', {
      // the protocol's own bytecode: 0.4.0 and 0.5.0 reports (fee mint only), then 1.0.0 with the
      // RedeemManager from day 2, 1.0.1 and 1.1.0 with it, 1.2.1 from day 3: redeem requests are satisfied
      // by reports, which burn the RedeemManager's shares in their tx; coverage donations (days 3 and 6), a
      // refused report (day 5), EL fees above the bound (day 8) and a 1.x loss day with EL fees (day 11)
      ...SHORT_VERSIONED_HISTORY,
      days: DAYS,
      walletCount: 30,
      startDate: '2026-04-24',
      dayIntervalMs: 0,
      blockIntervalMs: 100,
      simulator: { behavior: { redeem: 0.15 } },
    })
    dbh = await migratedTestDatabase()
    await syncAndCompute(dbh.db, devnet)
  }, 300_000)

  afterAll(async () => {
    await dbh?.close()
    await devnet?.stop()
  })

  test('behavior: on every report date the collector and the RedeemManager hold balanceOf at the report block', async () => {
    const client = createPublicClient({ transport: http(devnet.rpcUrl) })
    const river = devnet.contracts.river as Address
    const redeemManager = devnet.contracts.redeemManager.toLowerCase()
    const days: { report_epoch: string; block_number: string; visible_version: number; date: string }[] =
      await dbh
        .db('days')
        .select(
          'report_epoch',
          'block_number',
          'visible_version',
          dbh.db.raw("to_char(date, 'YYYY-MM-DD') as date"),
        )
        .where({ status: 'computed' })
        .orderBy('block_number')
    expect(days.length).toBe(DAYS)
    const balanceOf = (address: string, blockNumber: bigint) =>
      client.readContract({
        address: river,
        abi: riverAbi,
        functionName: 'balanceOf',
        args: [address as Address],
        blockNumber,
      })
    let feeMintDays = 0
    let burnDays = 0
    for (const day of days) {
      const block = BigInt(day.block_number)
      // the report's transaction is the last of its block (the oracle members' earlier votes move no LsETH):
      // balanceOf at the block is the end of the report's transaction
      const { transactions } = await client.getBlock({ blockNumber: block })
      const receipts = await Promise.all(transactions.map((hash) => client.getTransactionReceipt({ hash })))
      const moving = receipts.filter((r) =>
        r.logs.some((l) => l.address.toLowerCase() === river.toLowerCase()),
      )
      expect(
        moving.map((r) => r.transactionHash),
        `report block ${block}`,
      ).toEqual([transactions.at(-1)])
      const collector = (
        await client.readContract({
          address: river,
          abi: collectorAbi,
          functionName: 'getCollector',
          blockNumber: block,
        })
      ).toLowerCase()
      const records = await dbh
        .db('wallet_records')
        .where({ report_epoch: day.report_epoch, version: day.visible_version })
        .whereIn('address', [collector, redeemManager])
        .select('address', 'balance_lseth', 'rewards_eth', 'mints_lseth', 'burns_lseth')
      const stored = new Map(records.map((r) => [r.address as string, r]))
      const transfers = await client.getContractEvents({
        address: river,
        abi: riverAbi,
        eventName: 'Transfer',
        fromBlock: block,
        toBlock: block,
      })
      const [U, S, Up, Sp] = await Promise.all(
        [block, block - 1n].flatMap((blockNumber) =>
          (['totalUnderlyingSupply', 'totalSupply'] as const).map((functionName) =>
            client.readContract({ address: river, abi: riverAbi, functionName, blockNumber }),
          ),
        ),
      )

      // the collector: its stored balance is balanceOf at the report block, the fee mint included
      const after = await balanceOf(collector, block)
      const before = await balanceOf(collector, block - 1n)
      const record = stored.get(collector)
      const where = `collector on ${day.date} (block ${block})`
      const feeMint = transfers
        .filter((t) => t.args.from === ZERO_ADDRESS && t.args.to?.toLowerCase() === collector)
        .reduce((sum, t) => sum + (t.args.value as bigint), 0n)
      expect(after - before, `the ${where} received the report's fee mint`).toBe(feeMint)
      if (record === undefined) {
        expect(after, `the ${where} holds LsETH but has no record`).toBe(0n)
        continue
      }
      expect(BigInt(record.balance_lseth), `balance of the ${where}`).toBe(after)
      if (feeMint > 0n) feeMintDays += 1
      expect(BigInt(record.mints_lseth) >= feeMint, `mints of the ${where} include the fee mint`).toBe(true)
      // the fee shares minted by the report earn nothing that report: the reward is on the balance before
      const pool = { U: U as bigint, S: S as bigint, Up: Up as bigint, Sp: Sp as bigint }
      expect(BigInt(record.rewards_eth), `rewards of the ${where}`).toBe(
        floorDiv(before * (pool.U * pool.Sp - pool.Up * pool.S), pool.S * pool.Sp),
      )

      // the RedeemManager (River >= 1.0.0): its shares burned by the report are gone from its balance
      const rmAfter = await balanceOf(redeemManager, block)
      const rmRecord = stored.get(redeemManager)
      if (rmRecord === undefined) {
        expect(rmAfter, `RedeemManager without a record on ${day.date}`).toBe(0n)
        continue
      }
      expect(BigInt(rmRecord.balance_lseth), `balance of the RedeemManager on ${day.date}`).toBe(rmAfter)
      const burned = transfers
        .filter((t) => t.args.from?.toLowerCase() === redeemManager && t.args.to === ZERO_ADDRESS)
        .reduce((sum, t) => sum + (t.args.value as bigint), 0n)
      if (burned > 0n) {
        burnDays += 1
        expect(rmAfter, `the report of ${day.date} burned RedeemManager shares`).toBe(
          (await balanceOf(redeemManager, block - 1n)) - burned,
        )
        expect(BigInt(rmRecord.burns_lseth) >= burned, `burns of the RedeemManager on ${day.date}`).toBe(true)
      }
    }
    // the history has what the rule is about: fee mints to the collector and, under River >= 1.0.0, reports
    // that burn the RedeemManager's shares in their own transaction (a Transfer to 0x0 in the report tx)
    expect(feeMintDays).toBeGreaterThan(DAYS / 2)
    expect(burnDays).toBeGreaterThan(0)
  })

  test('behavior: every record equals the chain (collector and RedeemManager among the holders checked)', async () => {
    const checked = await verifyRecordsAgainstChain(dbh.db, {
      rpcUrl: devnet.rpcUrl,
      river: devnet.contracts.river,
      holders: devnet.simulator.state().wallets.map((w) => w.address),
    })
    expect(checked.days).toBe(DAYS)
    // every day reconciles: the shares before the report sum to the supply before it
    const residuals = await dbh.db('day_reconciliations').pluck('shares_residual')
    expect(residuals).toHaveLength(DAYS)
    expect(new Set(residuals)).toEqual(new Set(['0']))
  })

  test("behavior: the fee booked for each report is the shares River minted to the collector, and the holders' fees are their value", async () => {
    const client = createPublicClient({ transport: http(devnet.rpcUrl) })
    const river = devnet.contracts.river as Address
    const rows: { report_epoch: string; block_number: string; gross_fee_lseth: string; date: string }[] =
      await dbh
        .db('protocol_records as p')
        .join('days as d', function () {
          this.on('d.report_epoch', 'p.report_epoch').andOn('d.visible_version', 'p.version')
        })
        .select(
          'p.report_epoch',
          'p.block_number',
          'p.gross_fee_lseth',
          dbh.db.raw("to_char(p.date, 'YYYY-MM-DD') as date"),
        )
        .orderBy('p.block_number')
    expect(rows).toHaveLength(DAYS)
    const holders = devnet.simulator.state().wallets.length + 2
    let lossDaysWithFee = 0
    let coveragePulls = 0n
    let carriedFees = false
    for (const row of rows) {
      const block = BigInt(row.block_number)
      const logs = await client.getContractEvents({
        address: river,
        abi: riverAbi,
        fromBlock: block,
        toBlock: block,
      })
      const collector = (
        await client.readContract({
          address: river,
          abi: collectorAbi,
          functionName: 'getCollector',
          blockNumber: block,
        })
      ).toLowerCase()
      const minted = logs
        .filter(
          (l) =>
            l.eventName === 'Transfer' &&
            l.args.from === ZERO_ADDRESS &&
            l.args.to?.toLowerCase() === collector,
        )
        .reduce((sum, l) => sum + ((l.args as { value: bigint }).value ?? 0n), 0n)
      expect(BigInt(row.gross_fee_lseth), `fee shares booked on ${row.date}`).toBe(minted)
      // the holders' fees: the minted shares' value at the mint (RewardsEarned's new balance and supply), one
      // floor per holder
      const earned = logs.find((l) => l.eventName === 'RewardsEarned')?.args as
        | { newTotalUnderlyingBalance: bigint; newTotalSupply: bigint }
        | undefined
      const [fees] = await dbh
        .db('fee_records')
        .where({ report_epoch: row.report_epoch, kind: 'all' })
        .orderBy('version', 'desc')
        .limit(1)
        .pluck('fees_eth')
      const value = earned ? (minted * earned.newTotalUnderlyingBalance) / earned.newTotalSupply : 0n
      const residual = BigInt(fees ?? 0) - value
      expect(
        residual >= -BigInt(holders) && residual <= BigInt(holders),
        `fees of ${row.date} off by ${residual}`,
      ).toBe(true)
      for (const l of logs) {
        if (l.eventName === 'PulledCoverageFunds') coveragePulls += (l.args as { amount: bigint }).amount
        if (l.eventName !== 'ProcessedConsensusLayerReport') continue
        const { trace } = l.args as { trace: { rewards: bigint; pulledELFees: bigint } }
        // a fee on EL fees while the validators lost: rewards are the EL fees alone
        if (minted > 0n && trace.rewards === trace.pulledELFees && trace.pulledELFees > 0n)
          lossDaysWithFee += 1
      }
      const left = await client.getBalance({
        address: devnet.simulator.deployment.contracts.elFeeRecipient,
        blockNumber: block,
      })
      if (left > 0n) carriedFees = true
    }
    // the history holds the days where the real contracts decide money differently
    expect(lossDaysWithFee, 'a 1.x day where the validators lost while EL fees arrived').toBeGreaterThan(0)
    expect(coveragePulls, 'coverage funds pulled').toBeGreaterThan(0n)
    expect(carriedFees, "EL fees above a report's bound left for later reports").toBe(true)
  })
})
