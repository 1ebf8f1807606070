import { createHash } from 'node:crypto'
import { type Address, createPublicClient, http, type PublicClient, parseAbi } from 'viem'
import { expect } from 'vitest'
import { REPORT_EVENT_NAMES, riverAbi, riverLegacyAbi } from '../../chain/abi.ts'
import type { Db, DbHandle } from '../../db/index.ts'
import { WALLET_AMOUNT_COLUMNS, WALLET_RECORD_COLUMNS } from '../../db/records/columns.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { ReportDay } from '../../db/repos/reports.ts'
import type { JobRunner } from '../../jobs/runner.ts'
import { type ChainReportStep, readReportSteps } from './report-chain.ts'

/** Tables of computed records and their natural keys (after chain_id, report_epoch). */
const RECORD_TABLES: Record<string, string[]> = {
  wallet_records: ['address'],
  account_records: ['account_id'],
  protocol_records: [],
  fee_records: ['kind', 'org_id'],
  operator_fee_records: ['operator_id'],
  day_reconciliations: [],
}

/**
 * The visible records of every day, every table, sorted by natural key, without the run-specific version
 * column: equal dumps mean byte-identical stored records.
 */
export async function dumpVisibleRecords(db: Db): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {}
  for (const [table, keys] of Object.entries(RECORD_TABLES)) {
    const rows: Record<string, unknown>[] = await db(`${table} as r`)
      .join('days as d', function () {
        this.on('d.chain_id', 'r.chain_id')
          .andOn('d.report_epoch', 'r.report_epoch')
          .andOn('d.visible_version', 'r.version')
      })
      .select('r.*')
      .orderBy(['r.chain_id', 'r.report_epoch', ...keys.map((k) => `r.${k}`)])
    out[table] = rows.map((row) => {
      const { version: _version, ...rest } = row
      return JSON.stringify(rest, (_k, v) => (v instanceof Date ? v.toISOString() : v))
    })
  }
  return out
}

/** sha-256 of `dumpVisibleRecords`. */
export async function recordsHash(db: Db): Promise<string> {
  return createHash('sha256')
    .update(JSON.stringify(await dumpVisibleRecords(db)))
    .digest('hex')
}

/** Days and their status, in chain order. */
export async function dayStatuses(db: Db) {
  return db('days')
    .select('report_epoch', db.raw("to_char(date, 'YYYY-MM-DD') as date"), 'status', 'error', 'wallets')
    .orderBy('block_number')
}

/** Waits until every ingested report has a computed day (throws on a failed day or after `timeoutMs`). */
export async function waitAllComputed(db: Db, expectedDays: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const days = await dayStatuses(db)
    const failed = days.find((d) => d.status === 'failed')
    if (failed) throw new Error(`day ${failed.date} failed: ${failed.error}`)
    if (days.length >= expectedDays && days.every((d) => d.status === 'computed')) {
      // and no day stale against its predecessor
      const next = await createRepos(db).days.next((await db('days').first('chain_id')).chain_id)
      if (!next) return
    }
    if (Date.now() > deadline) {
      throw new Error(
        `days not computed in time: ${JSON.stringify(days.filter((d) => d.status !== 'computed'))}`,
      )
    }
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Runs scheduling passes on an inline runner until every ingested report's day is computed. */
export async function computeInline(db: Db, runner: JobRunner, expectedDays: number): Promise<void> {
  const earlier = (await runner.failed()).length
  for (let i = 0; i < expectedDays * 3 + 10; i++) {
    await runner.enqueue('days', {}, { jobId: `test-days-${Date.now()}-${i}` })
    await runner.idle(120_000)
    const failed = (await runner.failed()).slice(earlier)
    if (failed.length > 0) throw new Error(`jobs failed: ${JSON.stringify(failed)}`)
    const days = await dayStatuses(db)
    if (days.length >= expectedDays && days.every((d) => d.status === 'computed')) {
      const chainId = (await db('days').first('chain_id')).chain_id
      if (!(await createRepos(db).days.next(chainId))) return
    }
  }
  throw new Error(`days not computed: ${JSON.stringify(await dayStatuses(db))}`)
}

/** Copies the platform tables (orgs, accounts, wallets, discount rates) from one database to another. */
export async function copyPlatformData(from: Db, to: Db): Promise<void> {
  for (const table of ['orgs', 'accounts', 'wallets', 'discount_rates']) {
    const rows = await from(table).select('*')
    if (rows.length > 0) await to(table).insert(rows)
  }
}

/** a / b rounded toward negative infinity (b > 0). */
export const floorDiv = (a: bigint, b: bigint): bigint => (a >= 0n ? a / b : -((-a + b - 1n) / b))

/**
 * The reward of `shares` held over a report, recomputed from the pool on chain: floor(shares x (U Sp - Up S) /
 * (S Sp)) with U, S after and Up, Sp before (gross rewards: U and S at the fee mint instead).
 */
export function netReward(shares: bigint, pool: { U: bigint; S: bigint; Up: bigint; Sp: bigint }): bigint {
  return floorDiv(shares * (pool.U * pool.Sp - pool.Up * pool.S), pool.S * pool.Sp)
}

const V0_PARTS = [
  'dao_fees_eth',
  'provider_fees_eth',
  'slashing_fees_eth',
  'operator_fees_eth',
  'platform_fees_eth',
]
const V3_PARTS = ['lc_fees_eth', 'tech_provider_fees_eth', 'operator_fees_eth', 'platform_fees_eth']

/** River's getters of the addresses a report transaction itself moves LsETH of (1.0.0 on for the RedeemManager). */
const roleGettersAbi = parseAbi([
  'function getCollector() view returns (address)',
  'function getRedeemManager() view returns (address)',
])

/**
 * The collector (fee recipient) and, from River 1.0.0 on, the RedeemManager, read from River at `block`:
 * the holders whose balance the report transaction itself moves (fee mint, withdrawal event's burn).
 */
async function reportMovedHolders(client: PublicClient, river: Address, block: bigint): Promise<string[]> {
  const read = (functionName: 'getCollector' | 'getRedeemManager') =>
    client
      .readContract({ address: river, abi: roleGettersAbi, functionName, blockNumber: block })
      .then((address) => address.toLowerCase())
      .catch(() => null) // no RedeemManager before River 1.0.0
  const addresses = await Promise.all([read('getCollector'), read('getRedeemManager')])
  const [collector] = addresses
  expect(collector, `River's collector at block ${block}`).toMatch(/^0x[0-9a-f]{40}$/)
  return addresses.filter((a): a is string => a !== null && BigInt(a) !== 0n)
}

/**
 * LsETH `balanceOf` each of `addresses` (lower case) at the END of the report transaction of `block`: read at
 * the block, with the transfers of the block's later transactions undone (eth_call answers for whole blocks
 * only). The balance a record's `balance_lseth` must equal.
 *
 * @example
 * const [collectorBalance] = await balancesAfterReport(client, river, reportBlock, [collector])
 */
export async function balancesAfterReport(
  client: PublicClient,
  river: Address,
  block: bigint,
  addresses: readonly string[],
): Promise<bigint[]> {
  const [logs, atBlockEnd] = await Promise.all([
    client.getContractEvents({
      address: river,
      abi: [...riverAbi, ...riverLegacyAbi],
      fromBlock: block,
      toBlock: block,
    }),
    Promise.all(
      addresses.map((address) =>
        client.readContract({
          address: river,
          abi: riverAbi,
          functionName: 'balanceOf',
          args: [address as Address],
          blockNumber: block,
        }),
      ),
    ),
  ])
  const report = logs.find((l) => (REPORT_EVENT_NAMES as readonly string[]).includes(l.eventName))
  if (!report) throw new Error(`no oracle report in block ${block}`)
  const later = logs.filter(
    (l) => l.eventName === 'Transfer' && (l.transactionIndex as number) > (report.transactionIndex as number),
  )
  return addresses.map((address, i) => {
    let balance = atBlockEnd[i] as bigint
    for (const log of later) {
      const { from, to, value } = log.args as { from: string; to: string; value: bigint }
      if (to.toLowerCase() === address) balance -= value
      if (from.toLowerCase() === address) balance += value
    }
    return balance
  })
}

/**
 * Checks the stored records of every day against the chain and against their own laws:
 * - every LsETH holder at each report has a record whose `balance_lseth` is its `balanceOf` at the end of the
 *   report transaction (at the report block on the devnet, where the report is alone in its block: the
 *   collector's fee mint and the RedeemManager's burn by the report included), and whose net reward is
 *   floor(shares x (U_k S_{k-1} - U_{k-1} S_k) / (S_k S_{k-1})) on the shares held right BEFORE the report
 *   transaction, with U and S read on chain; the collector and the RedeemManager (read from River) are
 *   always among the holders checked, whatever `holders` lists;
 * - the balances before the report sum to the supply before the fee mint, those after it to the supply after;
 * - gross - net = fees and the fee parts of the day's model sum to the fees;
 * - every total_X is the running sum of X over the wallet's records;
 * - every account record is the sum of its wallets.
 * Returns what was checked.
 */
export async function verifyRecordsAgainstChain(
  db: Db,
  chain: { rpcUrl: string; river: string; holders: readonly string[] },
): Promise<{ days: number; walletDays: number }> {
  const client = createPublicClient({ transport: http(chain.rpcUrl) })
  const river = chain.river as Address
  const days: { report_epoch: string; block_number: string; visible_version: number }[] = await db('days')
    .select('report_epoch', 'block_number', 'visible_version')
    .orderBy('block_number')
  const running = new Map<string, Record<string, bigint>>()
  let walletDays = 0
  const steps = await readReportSteps(
    client,
    river,
    days.map((d) => BigInt(d.block_number)),
  )
  const last = days.at(-1)
  const moved = last ? await reportMovedHolders(client, river, BigInt(last.block_number)) : []
  for (const [i, day] of days.entries()) {
    const position = steps[i] as ChainReportStep
    const { block, U, S, Up, Sp } = position
    // the pool at the fee mint, from the chain's RewardsEarned log of the report block (none: no fee mint)
    const [mint] = await client.getContractEvents({
      address: river,
      abi: riverAbi,
      eventName: 'RewardsEarned',
      fromBlock: block,
      toBlock: block,
    })
    const Um = mint?.args.newTotalUnderlyingBalance ?? U
    const S0 = mint?.args.oldTotalSupply ?? S
    const minted = mint ? (mint.args.newTotalSupply as bigint) - (mint.args.oldTotalSupply as bigint) : 0n
    let holdersFees = 0n
    let holders = 0n
    let holdersShares = 0n
    let holdersBalances = 0n
    const records: Record<string, string | null>[] = await db('wallet_records')
      .where({ report_epoch: day.report_epoch, version: day.visible_version })
      .orderBy('address')
    const byAddress = new Map(records.map((r) => [r.address as string, r]))
    const addresses = [
      ...new Set([...chain.holders.map((h) => h.toLowerCase()), ...moved, ...byAddress.keys()]),
    ]
    const [before, after] = await Promise.all([
      position.balancesBefore(addresses),
      balancesAfterReport(client, river, block, addresses),
    ])
    addresses.forEach((address, i) => {
      const shares = before[i] as bigint
      const balance = after[i] as bigint
      const record = byAddress.get(address)
      if (!record) {
        expect([shares, balance], `holder ${address} has no record at report ${day.report_epoch}`).toEqual([
          0n,
          0n,
        ])
        return
      }
      walletDays += 1
      const where = `${address} at report ${day.report_epoch}`
      expect(BigInt(record.balance_lseth as string), `balance (after the report) of ${where}`).toBe(balance)
      expect(BigInt(record.rewards_eth as string), `net rewards of ${where}`).toBe(
        netReward(shares, { U, S, Up, Sp }),
      )
      expect(BigInt(record.gross_rewards_eth as string), `gross rewards of ${where}`).toBe(
        netReward(shares, { U: Um as bigint, S: S0 as bigint, Up, Sp }),
      )
      holdersFees += BigInt(record.fees_eth as string)
      holdersShares += shares
      holdersBalances += balance
      holders += 1n
      const amount = (field: string) => BigInt(record[field] as string)
      expect(amount('gross_rewards_eth') - amount('rewards_eth'), `fees of ${where}`).toBe(amount('fees_eth'))
      const parts = record.fee_model === 'v3' ? V3_PARTS : V0_PARTS
      expect(
        parts.reduce((sum, p) => sum + amount(p), 0n),
        `fee parts of ${where}`,
      ).toBe(amount('fees_eth'))
      const totals = running.get(address) ?? {}
      for (const column of WALLET_AMOUNT_COLUMNS) {
        if (column.startsWith('total_') || column.startsWith('balance_')) continue
        const totalColumn = totalColumnOf(column)
        const sum = (totals[totalColumn] ?? 0n) + amount(column)
        expect(amount(totalColumn), `${totalColumn} of ${where}`).toBe(sum)
        totals[totalColumn] = sum
      }
      running.set(address, totals)
    })
    // every share after the report transaction is held by someone (the records cover every holder)
    expect(holdersBalances, `shares held after report ${day.report_epoch}`).toBe(S)
    // every share before the report was held by someone; the holders' fees are the minted shares' value at
    // the fee mint, to within one wei per holder (each wallet's amounts are floored)
    if (mint) {
      expect(holdersShares, `shares held before report ${day.report_epoch}`).toBe(S0)
      const value = (minted * (Um as bigint)) / (mint.args.newTotalSupply as bigint)
      const residual = holdersFees - value
      expect(residual >= -holders - 1n && residual <= holders + 1n, `fee residual ${residual}`).toBe(true)
    }
  }
  // account records = sums of their wallets, for every day
  const sums = WALLET_AMOUNT_COLUMNS.map((c) => `sum(w.${c})::text as ${c}`).join(', ')
  const expected = await db.raw(
    `select w.report_epoch, w.account_id, count(*)::int as wallets, ${sums}
     from wallet_records w join days d on d.chain_id = w.chain_id and d.report_epoch = w.report_epoch
       and d.visible_version = w.version
     where w.account_id is not null group by w.report_epoch, w.account_id order by 1, 2`,
  )
  const stored: Record<string, unknown>[] = await db('account_records as a')
    .join('days as d', function () {
      this.on('d.chain_id', 'a.chain_id')
        .andOn('d.report_epoch', 'a.report_epoch')
        .andOn('d.visible_version', 'a.version')
    })
    .select('a.report_epoch', 'a.account_id', 'a.wallets', ...WALLET_AMOUNT_COLUMNS.map((c) => `a.${c}`))
    .orderBy(['a.report_epoch', 'a.account_id'])
  expect(stored).toEqual(expected.rows)
  return { days: days.length, walletDays }
}

/** `rewards_eth` -> `total_rewards_eth`, `period_lc_fees_lseth` -> `total_lc_fees_lseth`. */
function totalColumnOf(column: string): string {
  return `total_${column.replace(/^period_/, '')}`
}

/** Every column of a stored wallet record (for tests that build expectations by column). */
export const STORED_WALLET_COLUMNS = WALLET_RECORD_COLUMNS

/**
 * Publishes a new version of a computed day as the day pipeline does (records copied to the next version,
 * one wallet's rewards changed, the day's visible version and content hash flipped and the version logged
 * in the restatement log by `finishRun`; the old version keeps its records).
 */
export async function publishNewVersion(dbh: DbHandle, day: ReportDay, address: string, rewards: string) {
  const next = day.visible_version + 1
  const key = { chain_id: day.chain_id, report_epoch: day.report_epoch }
  await dbh.db.transaction(async (tx) => {
    for (const table of ['wallet_records', 'protocol_records']) {
      const columns = (
        await tx.raw(
          `select column_name from information_schema.columns where table_name = ? and column_name <> 'version'`,
          [table],
        )
      ).rows.map((r: { column_name: string }) => `"${r.column_name}"`)
      await tx.raw(
        `insert into ${table} (version, ${columns.join(', ')}) select ?, ${columns.join(', ')} from ${table} ` +
          'where chain_id = ? and report_epoch = ? and version = ?',
        [next, day.chain_id, day.report_epoch, day.visible_version],
      )
    }
    await tx('wallet_records')
      .where({ ...key, version: next, address })
      .update({ rewards_eth: rewards })
    const row = await tx('days').where(key).first()
    await tx('days').where(key).update({ last_version: next })
    await createRepos(tx).days.finishRun(day.chain_id, day.report_epoch, {
      version: next,
      wallets: row.wallets,
      engineVersion: 'test',
      contentHash: `test-${next}`,
      basedOnHash: row.based_on_hash,
      durationMs: 0,
      reason: 'recompute requested',
      previousVersion: day.visible_version,
    })
  })
}
