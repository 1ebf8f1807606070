import type { Repos } from '../../db/repos/index.ts'

/**
 * An oracle report row of `chainId` at block 100 + i on `date` with epoch `epoch` (only the columns the days
 * table reads matter; every amount 0), for the day tests.
 */
export function oracleReportRow(chainId: number, i: number, date: string, epoch: string) {
  const zero = '0'
  return {
    chain_id: chainId,
    block_number: 100 + i,
    log_index: 0,
    tx_index: 0,
    block_hash: `0x${(100 + i).toString(16).padStart(64, '0')}`,
    tx_hash: `0x${(200 + i).toString(16).padStart(64, '0')}`,
    block_time: new Date(`${date}T12:00:00Z`),
    report_date: date,
    epoch,
    validators_balance: zero,
    validators_skimmed_balance: zero,
    validators_exited_balance: zero,
    validators_exiting_balance: zero,
    validators_count: 0,
    stopped_validator_count_per_operator: [],
    rebalance_deposit_to_redeem_mode: false,
    slashing_containment_mode: false,
    trace_rewards: zero,
    trace_pulled_el_fees: zero,
    trace_pulled_redeem_manager_exceeding_eth: zero,
    trace_pulled_coverage_funds: zero,
    total_underlying_supply: zero,
    total_supply: zero,
    fee_shares: zero,
    global_fee_bps: 1000,
  }
}

/**
 * Publishes run `version` of day `i` (epoch `epoch`) as a finalization does: 3 wallets, content `hash-<i>` on
 * its predecessor's `hash-<i-1>`, a first version.
 */
export function finishTestRun(repos: Repos, chainId: number, epoch: string, i: number, version: number) {
  return repos.days.finishRun(chainId, epoch, {
    version,
    wallets: 3,
    engineVersion: 'test',
    contentHash: `hash-${i}`,
    basedOnHash: i === 0 ? null : `hash-${i - 1}`,
    durationMs: 5,
    reason: 'first',
    previousVersion: null,
  })
}

/**
 * Stores an oracle report row (`oracleReportRow`) for each of `dates` (epoch `epochOf(i)`) and sets the River
 * cursor at `cursorBlock`: what the follower leaves for the scheduler and `startBackfill` to read.
 */
export async function ingestTestReports(
  repos: Repos,
  chainId: number,
  dates: readonly string[],
  epochOf: (i: number) => string,
  cursorBlock: bigint,
) {
  await repos.chain.insertEvents(
    'oracle_reports',
    dates.map((date, i) => oracleReportRow(chainId, i, date, epochOf(i))),
  )
  await setRiverCursor(repos, chainId, cursorBlock)
}

/** Sets the River cursor of `chainId` at `block` (how far the follower has confirmed). */
export function setRiverCursor(repos: Repos, chainId: number, block: bigint) {
  return repos.chain.setCursor({
    chainId,
    stream: 'river',
    address: '0x0',
    blockNumber: block,
    blockHash: null,
  })
}
