import fs from 'node:fs'
import path from 'node:path'
/**
 * Synthetic chain history for the benchmarks (bench/day.ts, bench/api.ts) and the tests that need a computed
 * day of many wallets (./rewards-day.ts), written straight into the tables
 * the follower fills: `oracle_reports` (U and S growing ~3 %/year, a 10 % fee whose fee shares follow
 * River's fee-mint formula), `lseth_transfers` (N holders minted before report 1; each day a few % of them
 * send part of their balance to another holder, a few new holders deposit, the fee mint goes to the
 * collector), `report_operators`, the `river` chain cursor, and optionally registered wallets (orgs,
 * accounts, discount rates). Deterministic (seeded devnet/rng.ts). Rows go in with `bulkWrite` (COPY on
 * Postgres, INSERT batches on PGlite).
 */

import { toAddress } from '../../common/address.ts'
import { type BulkValue, bulkWrite } from '../../db/bulk.ts'
import type { Db } from '../../db/index.ts'
import { createRng } from '../../devnet/rng.ts'
import { feeSharesToMint } from '../../engine/index.ts'

export const BENCH_CHAIN_ID = 31_337
/** River and the RedeemManager (their incoming transfers count as burns). */
export const BURN_ADDRESSES = [
  toAddress('0x00000000000000000000000000000000000a11ce'),
  toAddress('0x00000000000000000000000000000000000b0b00'),
] as const
export const COLLECTOR = '0x00000000000000000000000000000000000fee00'

const GWEI = 1_000_000_000n
const BLOCKS_PER_DAY = 7_200
const FIRST_REPORT_BLOCK = 20_000
/** Report 1 by default: 2026-05-02 12:00 UTC (Commercials V3 applies from 2026-05-01). */
const FIRST_REPORT_TIME = Date.UTC(2026, 4, 2, 12)
/** The chain's block 0 for a history whose report 1 is at `firstReportTime` (ms). */
const genesisOf = (firstReportTime: number) => firstReportTime - FIRST_REPORT_BLOCK * 12_000
const FEE_BPS = 1000
/** Gross yearly rewards: 3.3 % of U, so the rate grows ~3 %/year after the 10 % fee. */
const GROSS_APR_PER_MILLE = 33n

export interface HistoryOptions {
  holders: number
  /** Reports (days) to write: report 1 .. report `reports`. */
  reports: number
  /** Share of holders sending part of their balance each day (default 0.03). */
  senders?: number
  /** New holders depositing each day, as a share of `holders` (default 0.001). */
  newHolders?: number
  /** Share of holders registered on the platform (default 0.01), in accounts of 100 wallets. */
  registered?: number
  seed?: number
  /** Block time of report 1, ms since the epoch (default 2026-05-02 12:00 UTC); one report a day after it. */
  firstReportTime?: number
}

export interface ReportInfo {
  index: number
  epoch: string
  block: number
  date: string
}

export interface History {
  reports: ReportInfo[]
  /** Holders at each report (wallets of its day), by report index - 1. */
  walletsAt: number[]
  transfers: number
  registered: number
}

const reportBlock = (k: number) => FIRST_REPORT_BLOCK + (k - 1) * BLOCKS_PER_DAY
const blockTime = (block: number, firstReportTime = FIRST_REPORT_TIME) =>
  new Date(genesisOf(firstReportTime) + block * 12_000)
const hash = (n: number, salt: string) => `0x${salt}${n.toString(16).padStart(64 - salt.length, '0')}`

/**
 * Where a report's day starts and ends: a reports's block, its date, its epoch (`firstReportTime`: as given
 * to `writeHistory`).
 */
export function reportInfo(k: number, firstReportTime = FIRST_REPORT_TIME): ReportInfo {
  const block = reportBlock(k)
  return {
    index: k,
    epoch: String(400_000 + k * 225),
    block,
    date: blockTime(block, firstReportTime).toISOString().slice(0, 10),
  }
}

/** The columns every event row starts with (where on the chain it happened). */
const EVENT_COLUMNS = [
  'chain_id',
  'block_number',
  'log_index',
  'tx_index',
  'block_hash',
  'tx_hash',
  'block_time',
]

const TRANSFER_COLUMNS = [...EVENT_COLUMNS, 'from_address', 'to_address', 'value']

const REPORT_COLUMNS = [
  ...EVENT_COLUMNS,
  'report_date',
  'epoch',
  'validators_balance',
  'validators_skimmed_balance',
  'validators_exited_balance',
  'validators_exiting_balance',
  'validators_count',
  'stopped_validator_count_per_operator',
  'rebalance_deposit_to_redeem_mode',
  'slashing_containment_mode',
  'trace_rewards',
  'trace_pulled_el_fees',
  'trace_pulled_redeem_manager_exceeding_eth',
  'trace_pulled_coverage_funds',
  'total_underlying_supply',
  'total_supply',
  'fee_shares',
  'global_fee_bps',
  'pool_before_underlying',
  'pool_before_supply',
]

/**
 * Writes the history of `options.holders` holders over `options.reports` reports and sets the `river`
 * cursor to report `cursorAt` (default: the last), so the scheduler sees only the reports up to it.
 */
export async function writeHistory(
  db: Db,
  options: HistoryOptions,
  cursorAt = options.reports,
): Promise<History> {
  const random = createRng(options.seed ?? 7).next
  const firstReportTime = options.firstReportTime ?? FIRST_REPORT_TIME
  const senders = options.senders ?? 0.03
  const newHolders = Math.round(options.holders * (options.newHolders ?? 0.001))
  const randomAddress = () => {
    let hex = '0x'
    for (let i = 0; i < 5; i++)
      hex += Math.floor(random() * 4_294_967_296)
        .toString(16)
        .padStart(8, '0')
    return hex
  }
  const addresses: string[] = []
  // balances in gwei-shares (exact as doubles: <= 1000 LsETH = 1e12 gwei)
  const capacity = options.holders + newHolders * options.reports
  const balances = new Float64Array(capacity)

  const transferRows: BulkValue[][] = []
  let transfers = 0
  const flushTransfers = async () => {
    if (transferRows.length === 0) return
    transfers += await bulkWrite(db, 'lseth_transfers', TRANSFER_COLUMNS, transferRows)
    transferRows.length = 0
  }
  // transfers of one period, spread over the blocks between two reports (several txs per block)
  const period = (firstBlock: number, blocks: number, count: number) => {
    const perBlock = Math.max(1, Math.ceil(count / blocks))
    return (i: number) => {
      const block = firstBlock + Math.floor(i / perBlock)
      const slot = i % perBlock
      return { block, tx: slot, log: slot }
    }
  }
  const transferRow = (
    at: { block: number; tx: number; log: number },
    from: string,
    to: string,
    value: bigint,
  ): BulkValue[] => [
    BENCH_CHAIN_ID,
    at.block,
    at.log,
    at.tx,
    hash(at.block, 'b'),
    hash(at.block * 1000 + at.tx, 'c'),
    blockTime(at.block, firstReportTime).toISOString(),
    from,
    to,
    value,
  ]
  const ZERO = '0x0000000000000000000000000000000000000000'

  // holders deposit 1:1 before report 1 (0.01 .. 1000 LsETH)
  const mintAt = period(1, FIRST_REPORT_BLOCK - 1, options.holders)
  let supply = 0n
  for (let i = 0; i < options.holders; i++) {
    const address = randomAddress()
    const gwei = Math.floor(10_000_000 + random() * 999_990_000_000)
    addresses.push(address)
    balances[i] = gwei
    supply += BigInt(gwei) * GWEI
    transferRows.push(transferRow(mintAt(i), ZERO, address, BigInt(gwei) * GWEI))
    if (transferRows.length >= 50_000) await flushTransfers()
  }
  await flushTransfers()

  const reports: ReportInfo[] = []
  const walletsAt: number[] = []
  const reportRows: BulkValue[][] = []
  const operatorRows: BulkValue[][] = []
  let underlying = supply // 1:1 before the first report
  let previousSupply = supply
  let previousUnderlying = underlying
  let collectorHolds = false
  for (let k = 1; k <= options.reports; k++) {
    const info = reportInfo(k, firstReportTime)
    if (k > 1) {
      // the period's transfers: a share of holders send 10-60 % of their balance to another holder
      const sending = Math.round(addresses.length * senders)
      const at = period(reportBlock(k - 1) + 1, BLOCKS_PER_DAY - 1, sending + newHolders)
      let deposits = 0n
      let minted = 0n
      for (let i = 0; i < sending; i++) {
        const from = Math.floor(random() * addresses.length)
        const to = Math.floor(random() * addresses.length)
        const amount = Math.floor((balances[from] as number) * (0.1 + random() * 0.5))
        if (from === to || amount === 0) continue
        balances[from] = (balances[from] as number) - amount
        balances[to] = (balances[to] as number) + amount
        transferRows.push(
          transferRow(at(i), addresses[from] as string, addresses[to] as string, BigInt(amount) * GWEI),
        )
      }
      // new holders deposit at the previous report's rate
      for (let j = 0; j < newHolders; j++) {
        const address = randomAddress()
        const gwei = Math.floor(10_000_000 + random() * 99_990_000_000)
        const shares = BigInt(gwei) * GWEI
        balances[addresses.length] = gwei
        addresses.push(address)
        minted += shares
        deposits += (shares * previousUnderlying) / previousSupply
        transferRows.push(transferRow(at(sending + j), ZERO, address, shares))
      }
      await flushTransfers()
      supply += minted
      underlying += deposits
    }
    const supplyPreFee = supply
    // the pool right before the report transaction (the follower reads it at the previous block)
    const underlyingBefore = underlying
    const rewards = (previousUnderlying * GROSS_APR_PER_MILLE) / 365_000n
    underlying += rewards
    const feeShares = feeSharesToMint({
      rewards,
      supplyBefore: supplyPreFee,
      underlyingAfter: underlying,
      feeBps: FEE_BPS,
    })
    supply = supplyPreFee + feeShares
    const block = info.block
    const time = blockTime(block, firstReportTime).toISOString()
    // the fee mint (log 0) and the report (log 1) in the report tx; the fee shares count from the next day
    transferRows.push(transferRow({ block, tx: 0, log: 0 }, ZERO, COLLECTOR, feeShares))
    await flushTransfers()
    walletsAt.push(addresses.length + (collectorHolds ? 1 : 0))
    collectorHolds = true
    const validators = Number(underlying / (32n * 10n ** 18n)) + 1
    reportRows.push([
      BENCH_CHAIN_ID,
      block,
      1,
      0,
      hash(block, 'b'),
      hash(block * 1000, 'c'),
      time,
      info.date,
      info.epoch,
      underlying,
      0,
      0,
      0,
      validators,
      '{0,0,0,0}',
      false,
      false,
      rewards,
      0,
      0,
      0,
      underlying,
      supply,
      feeShares,
      FEE_BPS,
      underlyingBefore,
      supplyPreFee,
    ])
    for (let op = 0; op < 3; op++) {
      operatorRows.push([BENCH_CHAIN_ID, block, 1, op, Math.floor(validators / 3)])
    }
    reports.push(info)
    previousSupply = supply
    previousUnderlying = underlying
  }
  await bulkWrite(db, 'oracle_reports', REPORT_COLUMNS, reportRows)
  await bulkWrite(
    db,
    'report_operators',
    ['chain_id', 'block_number', 'log_index', 'operator_index', 'funded'],
    operatorRows,
  )
  const registered = await writeRegistered(
    db,
    addresses,
    options.registered ?? 0.01,
    random,
    new Date(genesisOf(firstReportTime)),
  )
  await setCursor(db, reportInfo(cursorAt, firstReportTime).block)
  return { reports, walletsAt, transfers, registered }
}

/** Moves the `river` cursor (the follower's progress) to `block`: the scheduler sees reports up to it. */
export async function setCursor(db: Db, block: number): Promise<void> {
  await db('chain_cursors')
    .insert({
      chain_id: BENCH_CHAIN_ID,
      stream: 'river',
      address: BURN_ADDRESSES[0],
      block_number: block,
      block_hash: hash(block, 'b'),
    })
    .onConflict(['chain_id', 'stream'])
    .merge()
}

/** A version-4-shaped UUID from the seeded generator (ids stay the same from run to run, so do the hashes). */
function seededUuid(random: () => number): string {
  let hex = ''
  for (let i = 0; i < 4; i++)
    hex += Math.floor(random() * 4_294_967_296)
      .toString(16)
      .padStart(8, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** Registers a share of the holders: 5 orgs, accounts of 100 wallets, a third with a discount. */
async function writeRegistered(
  db: Db,
  addresses: string[],
  share: number,
  random: () => number,
  sinceTime: Date,
) {
  const since = sinceTime.toISOString()
  const count = Math.round(addresses.length * share)
  if (count === 0) return 0
  const orgs = Array.from({ length: 5 }, (_, i) => `org_bench_${i}`)
  await db('orgs').insert(orgs.map((id) => ({ id, name: id, can_allowlist: true })))
  const accountCount = Math.ceil(count / 100)
  const accounts = Array.from({ length: accountCount }, (_, i) => ({
    id: seededUuid(random),
    org_id: orgs[i % orgs.length] as string,
    key: `account-${i}`,
    status: 'ACTIVE',
  }))
  await bulkWrite(
    db,
    'accounts',
    ['id', 'org_id', 'key', 'status'],
    accounts.map((a) => [a.id, a.org_id, a.key, a.status]),
  )
  const targets = ['0.05', '0.08']
  await bulkWrite(
    db,
    'discount_rates',
    ['account_id', 'target_fee_rate', 'created_by', 'effective_from'],
    accounts.filter((_, i) => i % 3 === 0).map((a, i) => [a.id, targets[i % 2] as string, 'bench', since]),
  )
  const rows: BulkValue[][] = []
  const step = addresses.length / count
  for (let i = 0; i < count; i++) {
    const account = accounts[Math.floor(i / 100)] as (typeof accounts)[number]
    rows.push([
      seededUuid(random),
      account.id,
      account.org_id,
      orgs[Math.floor(random() * orgs.length)] as string,
      addresses[Math.floor(i * step)] as string,
      'ETH',
      'ALLOWLISTED',
      true,
      true,
      i % 10 !== 0,
      since,
    ])
  }
  await bulkWrite(
    db,
    'wallets',
    [
      'id',
      'account_id',
      'org_id',
      'originator_org_id',
      'address',
      'type',
      'status',
      'wants_allowlist',
      'allowlisted',
      'on_platform',
      'attributed_from',
    ],
    rows,
  )
  return count
}

/**
 * A `$DATA_DIR/devnet.json` naming the synthetic chain (`CHAIN=devnet`): its id, and River and the
 * RedeemManager as the history's burn addresses. The backfill reads only the database: no RPC is dialled.
 */
export function syntheticDevnetFile(dir: string) {
  const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`
  const file = {
    rpc_url: 'http://127.0.0.1:8545',
    chain_id: BENCH_CHAIN_ID,
    contracts: {
      river: BURN_ADDRESSES[0],
      redeemManager: BURN_ADDRESSES[1],
      allowlist: address(0xa110),
      oracle: address(0x0ace),
      operatorsRegistry: address(0x0be5),
    },
    allower: { address: address(0xa11e), private_key: `0x${'11'.repeat(32)}` },
    firewall: address(0xf1e),
    deploy_block: 0,
  }
  fs.writeFileSync(path.join(dir, 'devnet.json'), JSON.stringify(file, null, 2))
}
