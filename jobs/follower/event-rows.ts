import { REPORT_EVENT_NAMES } from '../../chain/abi.ts'
import type { DecodedLog } from '../../chain/log-decoding.ts'
import {
  CURRENCIES,
  type DerivedRounds,
  isDerived,
  type PriceRead,
  type PriceReads,
} from '../../chain/price-feeds.ts'
import type { Address } from '../../common/address.ts'
import type { EventTable } from '../../db/repos/chain.ts'
import type { MissingStoredPrice, ReportPriceRow, StoredPrice } from '../../db/repos/prices.ts'
import { derivedPrice } from '../../engine/cross-price.ts'
import { plainEventRow } from './plain-event-rows.ts'
import {
  type BlockEndReads,
  logsByBlock,
  type PoolReads,
  poolBeforeReport,
  type ReportTxState,
  reportTxState,
} from './report-state.ts'

/** A block's hash and time, as read from the node. */
export interface BlockFacts {
  hash: string
  time: Date
}

/**
 * What the chain said around an oracle report (`ProcessedConsensusLayerReport`, or `ConsensusLayerDataUpdate`
 * before River 1.0.0): at the end of its block River's U, S, fee (and the previous block's fee when the fee
 * changes after the report in its block), the operators and the ETH prices of the chain's feeds (each an
 * answer or a missing price with its reason); at the end of the previous block River's U and S, read only where
 * they are needed (`needsPoolBefore`).
 */
export interface ReportReads extends BlockEndReads {
  operators: { operator_index: number; funded: number }[]
  prices: PriceReads
  endOfPreviousBlock?: PoolReads
}

/**
 * A price read as it is stored: a feed's round as read, or ETH/EUR derived from its ETH / USD and EUR / USD rounds
 * (ETH/USD / EUR/USD, 18 decimals, rounded half-even once: `derivedPrice`) with both rounds, its feed, round
 * and time the ETH / USD round's.
 *
 * @example
 * storedPrice({ eth_usd, eur_usd }) // { feed: eth_usd.feed, answer: 2759889604415823367065n, decimals: 18, …, derived_from: { eth_usd, eur_usd } }
 */
export function storedPrice(read: PriceRead | DerivedRounds): StoredPrice | MissingStoredPrice {
  if (!isDerived(read)) return read
  const { eth_usd, eur_usd } = read
  const { answer, decimals } = derivedPrice(eth_usd, eur_usd)
  return {
    feed: eth_usd.feed,
    round_id: eth_usd.round_id,
    answer,
    decimals,
    price_time: eth_usd.price_time,
    derived_from: { eth_usd, eur_usd },
  }
}

/**
 * Whether a report's row needs River's pool right before it, read at the previous block: the chain's first
 * stored report (its day's growth starts from it) and a legacy report without a fee mint (its rewards are the
 * pool's change; with a fee mint, `RewardsEarned` says them). Every other report starts from its predecessor's
 * pool, already stored.
 *
 * @example
 * needsPoolBefore(reportLog, chunkLogs, { firstOfChain: false }) // true for a legacy loss day
 */
export function needsPoolBefore(
  report: DecodedLog,
  logs: readonly DecodedLog[],
  options: { firstOfChain: boolean },
): boolean {
  if (options.firstOfChain) return true
  return (
    reportShapeOf(report) === 'legacy' &&
    !logs.some((l) => l.eventName === 'RewardsEarned' && l.transactionHash === report.transactionHash)
  )
}

/** The `report_shape` of a report log: 'legacy' for River 0.4/0.5's `ConsensusLayerDataUpdate`, else 'v1'. */
export function reportShapeOf(log: Pick<DecodedLog, 'eventName'>): 'v1' | 'legacy' {
  return log.eventName === 'ConsensusLayerDataUpdate' ? 'legacy' : 'v1'
}

/** Whether a decoded log is an oracle report of any River version. */
export function isReportLog(log: Pick<DecodedLog, 'eventName'>): boolean {
  return (REPORT_EVENT_NAMES as readonly string[]).includes(log.eventName)
}

/**
 * The chain reads a chunk of logs needs before it can be mapped to rows (jobs/follower/index.ts reads them):
 * the header of every block with a log, the reads at each report's block, and the accounts of each
 * legacy Allowlist log recovered from its calldata (undefined: not recoverable, the log is skipped).
 */
export interface ChunkContext {
  blocks: ReadonlyMap<bigint, BlockFacts>
  reportReads: ReadonlyMap<string, ReportReads>
  legacyAccounts: ReadonlyMap<string, readonly Address[] | undefined>
  /**
   * What the Allowlist stored for each entry of a (not legacy) `SetAllowlistPermissions` log, by position: the
   * event carries the values as passed, and 1.2.1's `setDenyPermissions` stores exactly DENY or 0
   * (`chain/allowlist-calls.ts`). A legacy (0.4.0 `allow`) log's values are what was stored.
   */
  storedPermissions: ReadonlyMap<string, readonly bigint[]>
}

/** A permission change seen on chain, for the wallet state machine (platform/chain-sync.ts). */
export interface PermissionEvent {
  address: Address
  permissions: bigint
  txHash: string
}

/** The rows of a chunk, by table, and what the follower does with them besides storing. */
export interface EventRows {
  tables: Map<EventTable, Record<string, unknown>[]>
  /** one row per report and currency (`report_prices`), written after the reports' rows */
  prices: ReportPriceRow[]
  permissions: PermissionEvent[]
  /** UTC dates of the oracle reports in the chunk, in chain order. */
  reports: string[]
  /** Legacy Allowlist logs whose accounts were not recoverable (not stored; the caller warns). */
  skippedLegacy: DecodedLog[]
}

/** The key of a log within its chain: transaction hash and log index. */
export function logKey(log: Pick<DecodedLog, 'transactionHash' | 'logIndex'>): string {
  return `${log.transactionHash}:${log.logIndex}`
}

/**
 * A legacy report's rewards when its transaction minted no fee (no `RewardsEarned`: a loss, or a fee that rounds
 * to 0 shares): the report moved U by its rewards (the balance change less 32 ETH per newly seen validator, plus
 * the EL fees pulled) and the coverage funds pulled; a negative change is a loss, which earns nothing. `before`
 * is the pool right before the report's transaction (`needsPoolBefore` has it read).
 *
 * @example
 * legacyRewards({ totalUnderlyingSupply: 95n }, { totalUnderlyingSupply: 100n }, 0n, log) // 0n (a loss)
 */
export function legacyRewards(
  after: Pick<PoolReads, 'totalUnderlyingSupply'>,
  before: Pick<PoolReads, 'totalUnderlyingSupply'> | undefined,
  coveragePulled: bigint,
  log: Pick<DecodedLog, 'transactionHash' | 'logIndex'>,
): bigint {
  if (!before) throw new Error(`eventRows: no pool before the legacy report ${logKey(log)}`)
  const rewards = after.totalUnderlyingSupply - before.totalUnderlyingSupply - coveragePulled
  return rewards > 0n ? rewards : 0n
}

/** UTC date (YYYY-MM-DD) of a block time. */
export function utcDate(time: Date): string {
  return time.toISOString().slice(0, 10)
}

/**
 * What a chunk's transactions say besides their own rows, by transaction hash: the fee shares a report minted
 * (its RewardsEarned supply increase), a legacy report's rewards (new - old underlying), and the EL fees and
 * coverage funds it pulled.
 */
function transactionFacts(logs: readonly DecodedLog[]) {
  // the fee shares minted by a report's transaction: its RewardsEarned supply increase
  const feeSharesByTx = new Map<string, bigint>()
  // a legacy report's rewards (RewardsEarned: new - old underlying) and pulled amounts, by transaction
  const rewardsByTx = new Map<string, bigint>()
  const pulledELFeesByTx = new Map<string, bigint>()
  const pulledCoverageByTx = new Map<string, bigint>()
  for (const log of logs) {
    if (log.eventName === 'RewardsEarned') {
      const a = log.args as {
        newTotalSupply: bigint
        oldTotalSupply: bigint
        newTotalUnderlyingBalance: bigint
        oldTotalUnderlyingBalance: bigint
      }
      feeSharesByTx.set(log.transactionHash, a.newTotalSupply - a.oldTotalSupply)
      rewardsByTx.set(log.transactionHash, a.newTotalUnderlyingBalance - a.oldTotalUnderlyingBalance)
    } else if (log.eventName === 'PulledELFees') {
      pulledELFeesByTx.set(log.transactionHash, (log.args as { amount: bigint }).amount)
    } else if (log.eventName === 'PulledCoverageFunds') {
      pulledCoverageByTx.set(log.transactionHash, (log.args as { amount: bigint }).amount)
    }
  }
  return { feeSharesByTx, rewardsByTx, pulledELFeesByTx, pulledCoverageByTx }
}

/** The columns of a River 1.0+ report (`ProcessedConsensusLayerReport`) read from its event's report and trace. */
// biome-ignore lint/suspicious/noExplicitAny: decoded args are validated by the fetcher against the ABI
function v1ReportColumns(r: any, t: any) {
  return {
    epoch: r.epoch,
    validators_balance: r.validatorsBalance,
    validators_skimmed_balance: r.validatorsSkimmedBalance,
    validators_exited_balance: r.validatorsExitedBalance,
    validators_exiting_balance: r.validatorsExitingBalance,
    validators_count: Number(r.validatorsCount),
    stopped_validator_count_per_operator: (r.stoppedValidatorCountPerOperator as readonly number[]).map(
      Number,
    ),
    rebalance_deposit_to_redeem_mode: r.rebalanceDepositToRedeemMode,
    slashing_containment_mode: r.slashingContainmentMode,
    trace_rewards: t.rewards,
    trace_pulled_el_fees: t.pulledELFees,
    trace_pulled_redeem_manager_exceeding_eth: t.pulledRedeemManagerExceedingEthBuffer,
    trace_pulled_coverage_funds: t.pulledCoverageFunds,
  }
}

/**
 * Maps a chunk of decoded logs to table rows: pure and synchronous, every chain fact it needs comes in
 * `context`. Addresses come lower case from the decoder (common/address.ts); amounts stay bigint; events the
 * service does not store (River's PulledELFees and the like) are passed over.
 *
 * @example
 * const { tables, permissions, reports } = eventRows(1, logs, await readChunkContext(logs))
 */
export function eventRows(chainId: number, logs: readonly DecodedLog[], context: ChunkContext): EventRows {
  const tables = new Map<EventTable, Record<string, unknown>[]>()
  const push = (table: EventTable, row: Record<string, unknown>) => {
    const list = tables.get(table) ?? []
    list.push(row)
    tables.set(table, list)
  }
  const permissions: PermissionEvent[] = []
  const prices: ReportPriceRow[] = []
  const reports: string[] = []
  const skippedLegacy: DecodedLog[] = []
  let byBlock: Map<bigint, DecodedLog[]> | undefined
  const { feeSharesByTx, rewardsByTx, pulledELFeesByTx, pulledCoverageByTx } = transactionFacts(logs)
  /** A report row's pool columns, of either shape: U, S and fee after its transaction, its fee shares, U and S before. */
  const poolColumns = (log: DecodedLog, after: ReportTxState, before: PoolReads | undefined) => ({
    total_underlying_supply: after.totalUnderlyingSupply,
    total_supply: after.totalSupply,
    fee_shares: feeSharesByTx.get(log.transactionHash) ?? 0n,
    global_fee_bps: Number(after.globalFee),
    pool_before_underlying: before?.totalUnderlyingSupply ?? null,
    pool_before_supply: before?.totalSupply ?? null,
  })
  /** The chain reads of a report and its state right after its transaction and right before it. */
  const reportStates = (log: DecodedLog) => {
    const reads = context.reportReads.get(logKey(log))
    if (!reads) throw new Error(`eventRows: no report reads for log ${logKey(log)}`)
    byBlock ??= logsByBlock(logs)
    const blockLogs = byBlock.get(log.blockNumber) ?? []
    // the block-end reads, less what later transactions of the block did
    const after: ReportTxState = reportTxState(log, blockLogs, reads)
    const before = reads.endOfPreviousBlock
      ? poolBeforeReport(log, blockLogs, reads.endOfPreviousBlock)
      : undefined
    for (const operator of reads.operators) {
      push('report_operators', {
        chain_id: chainId,
        block_number: log.blockNumber,
        log_index: log.logIndex,
        ...operator,
      })
    }
    for (const currency of CURRENCIES) {
      prices.push({
        chain_id: chainId,
        block_number: log.blockNumber,
        log_index: log.logIndex,
        currency,
        ...storedPrice(reads.prices[currency]),
      })
    }
    return { after, before }
  }
  for (const log of logs) {
    const b = context.blocks.get(log.blockNumber)
    if (!b) throw new Error(`eventRows: no block facts for block ${log.blockNumber}`)
    const key = {
      chain_id: chainId,
      block_number: log.blockNumber,
      log_index: log.logIndex,
      tx_index: log.transactionIndex,
      block_hash: log.blockHash,
      tx_hash: log.transactionHash,
      block_time: b.time,
    }
    // biome-ignore lint/suspicious/noExplicitAny: decoded args are validated by the fetcher against the ABI
    const a = log.args as any
    const simple = plainEventRow(log.eventName, key, a)
    if (simple) {
      push(simple.table, simple.row)
      continue
    }
    switch (log.eventName) {
      case 'ProcessedConsensusLayerReport': {
        const { after: state, before } = reportStates(log)
        const date = utcDate(b.time)
        reports.push(date)
        push('oracle_reports', {
          ...key,
          report_date: date,
          ...v1ReportColumns(a.report, a.trace),
          ...poolColumns(log, state, before),
          report_shape: 'v1',
        })
        break
      }
      case 'ConsensusLayerDataUpdate': {
        // River 0.4.0/0.5.0: the report carries the validator count and total balance; roundId is the epoch
        const { after: state, before } = reportStates(log)
        const date = utcDate(b.time)
        reports.push(date)
        const coverage = pulledCoverageByTx.get(log.transactionHash) ?? 0n
        push('oracle_reports', {
          ...key,
          report_date: date,
          epoch: BigInt(a.roundId),
          validators_balance: a.validatorTotalBalance,
          validators_skimmed_balance: null,
          validators_exited_balance: null,
          validators_exiting_balance: null,
          validators_count: Number(a.validatorCount),
          stopped_validator_count_per_operator: null,
          rebalance_deposit_to_redeem_mode: null,
          slashing_containment_mode: null,
          trace_rewards: rewardsByTx.get(log.transactionHash) ?? legacyRewards(state, before, coverage, log),
          trace_pulled_el_fees: pulledELFeesByTx.get(log.transactionHash) ?? 0n,
          // no RedeemManager before River 1.0.0: nothing to pull from it
          trace_pulled_redeem_manager_exceeding_eth: 0n,
          trace_pulled_coverage_funds: coverage,
          ...poolColumns(log, state, before),
          report_shape: 'legacy',
        })
        break
      }
      case 'SetAllowlistPermissions': {
        // first mainnet implementation: the log has only the accounts' hash; the calldata has them, and its
        // `allow` stored the values as given
        const accounts = log.legacyIndexed
          ? context.legacyAccounts.get(logKey(log))
          : (a.accounts as readonly Address[])
        if (!accounts) {
          skippedLegacy.push(log)
          break
        }
        const perms = log.legacyIndexed
          ? (a.permissions as readonly bigint[])
          : context.storedPermissions.get(logKey(log))
        if (!perms) throw new Error(`eventRows: no stored permissions for log ${logKey(log)}`)
        accounts.forEach((account, position) => {
          push('allowlist_permissions', {
            ...key,
            position,
            address: account,
            permissions: perms[position],
          })
          permissions.push({
            address: account,
            permissions: perms[position]!,
            txHash: log.transactionHash,
          })
        })
        break
      }
      default:
        break // other River events (PulledELFees, ...) are not stored
    }
  }
  return { tables, prices, permissions, reports, skippedLegacy }
}
