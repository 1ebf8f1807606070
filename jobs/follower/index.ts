import { LRUCache } from 'lru-cache'
import type { Abi, Address } from 'viem'
import {
  allowlistAbi,
  operatorsRegistryAbi,
  redeemManagerAbi,
  riverAbi,
  riverLegacyAbi,
} from '../../chain/abi.ts'
import type { ChainContracts } from '../../chain/addresses.ts'
import { decodeAllowlistWrite, storedPermissions, writeMatches } from '../../chain/allowlist-calls.ts'
import { getHeadBlockNumber, readAllAtBlock, resultOf } from '../../chain/blocks.ts'
import type { ChainClient } from '../../chain/client.ts'
import { ChainError } from '../../chain/errors.ts'
import { recoverLegacyAllowlistAccounts } from '../../chain/legacy-allowlist.ts'
import type { DecodedLog } from '../../chain/log-decoding.ts'
import type { LogFetcher } from '../../chain/log-fetcher.ts'
import { readOperatorsAt } from '../../chain/operators.ts'
import { priceFeedCalls, priceReadsFrom } from '../../chain/price-feeds.ts'
import { withRetry } from '../../chain/retry.ts'
import type { Address as StoredAddress } from '../../common/address.ts'
import { forEachConcurrently } from '../../common/concurrency.ts'
import type { Logger } from '../../common/logger.ts'
import { createExclusive } from '../../db/exclusive.ts'
import type { Db } from '../../db/index.ts'
import type { EventTable } from '../../db/repos/chain.ts'
import { createRepos, inTransaction, type Repos } from '../../db/repos/index.ts'
import { applyPermissionEvents, recomputeWalletChainState } from '../../platform/chain-sync.ts'
import { emitRedeemEvents } from '../webhooks/emit.ts'
import {
  type BlockFacts,
  type ChunkContext,
  type EventRows,
  eventRows,
  isReportLog,
  logKey,
  needsPoolBefore,
  type ReportReads,
  reportShapeOf,
} from './event-rows.ts'
import { createOracleVoteCheck } from './oracle-votes.ts'
import { feeChangesAfterReport, logsByBlock } from './report-state.ts'

export interface FollowerDeps {
  db: Db
  client: ChainClient
  fetcher: LogFetcher
  chainId: number
  contracts: ChainContracts
  /** Blocks behind head treated as final; only those are ingested. */
  confirmations: number
  logger: Logger
}

export interface SyncResult {
  head: bigint
  target: bigint
  rolledBackFrom: bigint | undefined
  inserted: Partial<Record<EventTable, number>>
  reports: string[]
}

/** Chain reads in flight at once while a chunk's context is read (block headers, then logs' reads). */
const CHAIN_READS_IN_FLIGHT = 8

interface Stream {
  name: 'river' | 'redeemManager' | 'allowlist'
  address: Address
  abi: Abi
}

/** One follower of a chain at a time across every worker: the key of its advisory lock ('lsfl', chain id). */
export const FOLLOWER_LOCK_KEY = 0x6c73666c

/**
 * The chain follower: ingests the protocol's events up to `head - confirmations`, one cursor per
 * contract, each chunk written in one transaction with its cursor (so a crash loses nothing and a
 * re-run duplicates nothing), block hashes kept; a reorg rolls back every row past the fork point.
 */
export function createFollower(deps: FollowerDeps) {
  const { db, client, fetcher, chainId, contracts, logger } = deps
  const repos = createRepos(db)
  const streams: Stream[] = [
    // River's events of every version: a report is ConsensusLayerDataUpdate before 1.0.0
    { name: 'river', address: contracts.river, abi: [...riverAbi, ...riverLegacyAbi] as Abi },
    { name: 'redeemManager', address: contracts.redeemManager, abi: redeemManagerAbi as Abi },
    { name: 'allowlist', address: contracts.allowlist, abi: allowlistAbi as Abi },
  ]
  // blocks already read (hash and time), the 10,000 most recently used; dropped on a reorg
  const blockTimes = new LRUCache<bigint, { hash: string; time: Date }>({ max: 10_000 })
  const alone = createExclusive(db, [FOLLOWER_LOCK_KEY, chainId])
  // the members' votes that differ from each booked report, in the log (never stored, never failing a sync)
  const oracleVotes = createOracleVoteCheck({ client, fetcher, chainId, contracts, logger, repos })

  async function block(number: bigint) {
    const cached = blockTimes.get(number)
    if (cached) return cached
    const b = await withRetry(() => client.getBlock({ blockNumber: number }))
    const value = { hash: b.hash, time: new Date(Number(b.timestamp) * 1000) }
    blockTimes.set(number, value)
    return value
  }

  /** The chain's hash at `number`, or undefined when the chain has no such block (it was reorged away). */
  async function hashAt(number: bigint, head: bigint): Promise<string | undefined> {
    if (number > head) return undefined
    return withRetry(async () => (await client.getBlock({ blockNumber: number })).hash).catch((err) => {
      if (/not found|could not be found/i.test((err as Error).message)) return undefined
      throw err
    })
  }

  /** Finds the newest stored block that the chain still has; rolls back everything after it. */
  async function checkReorg(head: bigint): Promise<bigint | undefined> {
    const cursors = await repos.chain.cursors(chainId)
    let suspect = false
    for (const c of cursors) {
      if (!c.block_hash) continue
      if ((await hashAt(BigInt(c.block_number), head)) !== c.block_hash) {
        suspect = true
        break
      }
    }
    if (!suspect) return undefined
    blockTimes.clear()
    const top = cursors.reduce((max, c) => (BigInt(c.block_number) > max ? BigInt(c.block_number) : max), 0n)
    let forkPoint = contracts.startBlock
    for (const stored of await repos.chain.recentBlocks(chainId, top, 100_000)) {
      if ((await hashAt(stored.number, head)) === stored.hash) {
        forkPoint = stored.number + 1n
        break
      }
    }
    await inTransaction(db, async (txRepos) => {
      // the reports' prices go with them (before the reports: the rows reference them)
      await txRepos.prices.rollbackFrom(chainId, forkPoint)
      const { allowlistAddresses } = await txRepos.chain.rollbackFrom(chainId, forkPoint)
      await recomputeWalletChainState(txRepos, chainId, allowlistAddresses)
      // the days of the rolled-back reports, and every later day's totals, are computed again
      await txRepos.days.markStaleFrom(chainId, forkPoint)
    })
    logger.warn(
      { chain_id: chainId, rolled_back_from: forkPoint.toString() },
      'reorg detected, rows rolled back',
    )
    return forkPoint
  }

  /**
   * What a report's row reads at the end of its block (ReportReads): River's U, S and fee (and the previous
   * block's fee when `feeBeforeBlock`), and each operator's funded validators (for the operator fee split);
   * eventRows undoes what later transactions of the block did to U, S and the fee; with `poolBefore`
   * (`needsPoolBefore`), River's U and S at the end of the previous block. eth_calls through viem's deployless
   * multicall (no Multicall3 deployment needed, at any block): River's reads with the operator count, then every
   * operator in the registry layout of the report's `shape` (a backfill has one report a day: one call per value
   * was most of its requests), and the previous block's pool when asked. The operators are none when the
   * registry address is not configured or its layout cannot be read (the day then leaves operator fees
   * unallocated, and says so). The ETH prices of the chain's feeds (`contracts.priceFeeds`) ride in River's
   * multicall: three calls per feed; a feed that is not configured, has no code, reverts or answers a
   * non-positive price gives a missing price with its reason, an RPC failure fails the chunk (retried).
   */
  async function reportReadsAt(
    blockNumber: bigint,
    feeBeforeBlock: boolean,
    shape: 'v1' | 'legacy',
    poolBefore: boolean,
  ): Promise<ReportReads> {
    const registry = contracts.operatorsRegistry
    const river = { address: contracts.river, abi: riverAbi } as const
    const riverCalls = [
      { ...river, functionName: 'totalUnderlyingSupply' },
      { ...river, functionName: 'totalSupply' },
      { ...river, functionName: 'getGlobalFee' },
      ...(registry
        ? [{ address: registry, abi: operatorsRegistryAbi, functionName: 'getOperatorCount' }]
        : []),
    ] as const
    const outcomes = await readAllAtBlock(
      client,
      [...riverCalls, ...priceFeedCalls(contracts.priceFeeds)],
      blockNumber,
    )
    const [u, s, fee] = outcomes
    // the registry's count when it was asked (the price reads follow River's calls)
    const count = registry ? outcomes[3] : undefined
    // River's reads must answer (a revert fails the chunk); the registry may not
    const reads: Omit<ReportReads, 'operators'> = {
      totalUnderlyingSupply: resultOf(u) as bigint,
      totalSupply: resultOf(s) as bigint,
      globalFee: resultOf(fee) as bigint,
      prices: await priceReadsFrom(
        client,
        chainId,
        contracts.priceFeeds,
        outcomes.slice(riverCalls.length),
        blockNumber,
      ),
    }
    if (poolBefore) {
      const [uBefore, sBefore] = await readAllAtBlock(
        client,
        [
          { ...river, functionName: 'totalUnderlyingSupply' },
          { ...river, functionName: 'totalSupply' },
        ],
        blockNumber - 1n,
      )
      reads.endOfPreviousBlock = {
        totalUnderlyingSupply: resultOf(uBefore) as bigint,
        totalSupply: resultOf(sBefore) as bigint,
      }
    }
    if (feeBeforeBlock) {
      reads.globalFeeBeforeBlock = await withRetry(() =>
        client.readContract({
          address: contracts.river,
          abi: riverAbi,
          functionName: 'getGlobalFee',
          blockNumber: blockNumber - 1n,
        }),
      )
    }
    if (!registry) return { ...reads, operators: [] }
    if (count?.status !== 'success') {
      logger.warn(
        { err: count?.error, block_number: blockNumber.toString() },
        'operators registry unreadable at the report block; operator fees stay unallocated',
      )
      return { ...reads, operators: [] }
    }
    const operators = await readOperatorsAt(client, registry, Number(count.result), blockNumber, shape)
    if (operators.ok) return { ...reads, operators: operators.operators }
    logger.warn(
      { err: operators.error, block_number: blockNumber.toString() },
      'operators registry unreadable at the report block; operator fees stay unallocated',
    )
    return { ...reads, operators: [] }
  }

  /**
   * What the Allowlist stored for each entry of a `SetAllowlistPermissions` log (the event carries the values as
   * passed): from the transaction's calldata when it is the write that emitted the log (`setDenyPermissions`
   * stores exactly DENY or 0); otherwise, behind a wrapper that hides the call, `getPermissions` of each account
   * at the log's block (the block's last value, when one block changes an account twice). All zeros need no read.
   */
  async function storedPermissionsOf(
    args: { accounts: readonly StoredAddress[]; permissions: readonly bigint[] },
    log: DecodedLog,
  ): Promise<readonly bigint[]> {
    if (args.permissions.every((p) => p === 0n)) return args.permissions
    const tx = await withRetry(() => client.getTransaction({ hash: log.transactionHash }))
    const write = decodeAllowlistWrite(tx.input)
    if (write && writeMatches(write, args)) {
      return args.permissions.map((value) => storedPermissions(write.functionName, value))
    }
    const reads = await readAllAtBlock(
      client,
      args.accounts.map((account) => ({
        address: contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'getPermissions',
        args: [account],
      })),
      log.blockNumber,
    )
    return reads.map((read) => resultOf(read) as bigint)
  }

  /**
   * The chain reads a chunk needs (ChunkContext): block headers 8 at a time (none for a block whose logs carry
   * its time), checked against the logs' hashes; River's U, S and fee and the operators at each report's block
   * and the accounts of legacy Allowlist logs from their calldata, 8 logs at a time (kept by log key: the rows
   * are then made in log order).
   */
  async function readChunkContext(logs: DecodedLog[]): Promise<ChunkContext> {
    const blocks = new Map<bigint, BlockFacts>()
    // a block's time rides in its logs when the node gives it (`blockTimestamp`): no header read for it (most of
    // a sync's requests were these); a block already read keeps its entry, so a changed hash still throws below
    for (const log of logs) {
      if (log.blockTimestamp === undefined || blockTimes.has(log.blockNumber)) continue
      blockTimes.set(log.blockNumber, {
        hash: log.blockHash,
        time: new Date(Number(log.blockTimestamp) * 1000),
      })
    }
    const numbers = [...new Set(logs.map((l) => l.blockNumber))].filter((n) => !blockTimes.has(n))
    await forEachConcurrently(numbers, CHAIN_READS_IN_FLIGHT, async (n) => {
      await block(n)
    })
    for (const log of logs) {
      const b = await block(log.blockNumber)
      if (b.hash !== log.blockHash) {
        // the chain moved between the log query and the block read: a reorg in progress; the job retries
        blockTimes.delete(log.blockNumber)
        throw new ChainError('block hash changed while ingesting (reorg in progress)', {
          details: {
            block_number: log.blockNumber.toString(),
            log_block_hash: log.blockHash,
            block_hash: b.hash,
          },
        })
      }
      blocks.set(log.blockNumber, b)
    }
    const reportReads = new Map<string, ReportReads>()
    const legacyAccounts = new Map<string, readonly StoredAddress[] | undefined>()
    const stored = new Map<string, readonly bigint[]>()
    const pending = logs.filter((log) => isReportLog(log) || log.eventName === 'SetAllowlistPermissions')
    const byBlock = logsByBlock(logs)
    // the chain's first report (none stored, the first of this chunk) needs the pool before it
    const firstReport =
      (await repos.chain.count('oracle_reports', chainId)) === 0 ? logs.find(isReportLog) : undefined
    // several logs' reads in flight at once (a backfill has one report per day), as the headers above
    await forEachConcurrently(pending, CHAIN_READS_IN_FLIGHT, async (log) => {
      if (isReportLog(log)) {
        const feeBeforeBlock = feeChangesAfterReport(log, byBlock.get(log.blockNumber) ?? [])
        const blockLogs = byBlock.get(log.blockNumber) ?? []
        const poolBefore = needsPoolBefore(log, blockLogs, { firstOfChain: log === firstReport })
        reportReads.set(
          logKey(log),
          await reportReadsAt(log.blockNumber, feeBeforeBlock, reportShapeOf(log), poolBefore),
        )
      } else if (log.eventName === 'SetAllowlistPermissions' && log.legacyIndexed) {
        const tx = await withRetry(() => client.getTransaction({ hash: log.transactionHash }))
        legacyAccounts.set(logKey(log), recoverLegacyAllowlistAccounts(tx.input, log.args) ?? undefined)
      } else if (log.eventName === 'SetAllowlistPermissions') {
        stored.set(
          logKey(log),
          await storedPermissionsOf(
            log.args as { accounts: readonly StoredAddress[]; permissions: readonly bigint[] },
            log,
          ),
        )
      }
    })
    return { blocks, reportReads, legacyAccounts, storedPermissions: stored }
  }

  /** Converts a chunk of decoded logs to table rows: the chain reads, then the pure mapping. */
  async function rows(logs: DecodedLog[]): Promise<EventRows> {
    const converted = eventRows(chainId, logs, await readChunkContext(logs))
    for (const log of converted.skippedLegacy) {
      logger.warn(
        { block_number: log.blockNumber.toString(), tx_hash: log.transactionHash, log_index: log.logIndex },
        'legacy allowlist log skipped: its accounts are not recoverable from the calldata',
      )
    }
    return converted
  }

  /** Writes a converted chunk through `txRepos`, those of the chunk's transaction. */
  async function writeChunk(
    txRepos: Repos,
    stream: Stream,
    chunk: { toBlock: bigint; logs: DecodedLog[] },
    converted: EventRows,
    end: { hash: string; time: Date },
  ) {
    for (const [table, list] of converted.tables) await txRepos.chain.insertEvents(table, list)
    // the reports' prices, after their oracle_reports rows (which they reference), in the same transaction
    await txRepos.prices.insert(converted.prices)
    await emitRedeemEvents(txRepos, chainId, converted.tables)
    const blocks = new Map<bigint, { number: bigint; hash: string; time: Date }>()
    for (const log of chunk.logs) {
      const b = blockTimes.get(log.blockNumber)
      if (b) blocks.set(log.blockNumber, { number: log.blockNumber, ...b })
    }
    blocks.set(chunk.toBlock, { number: chunk.toBlock, ...end })
    await txRepos.chain.saveBlocks(chainId, [...blocks.values()])
    if (converted.permissions.length > 0) await applyPermissionEvents(txRepos, converted.permissions)
    await txRepos.chain.setCursor({
      chainId,
      stream: stream.name,
      address: stream.address,
      blockNumber: chunk.toBlock,
      blockHash: end.hash,
    })
  }

  /** One sync, run while holding the follower's lock; `onProgress` after each chunk written. */
  async function syncAlone(onProgress?: () => void): Promise<SyncResult> {
    const head = await getHeadBlockNumber(client)
    const target = head - BigInt(deps.confirmations)
    const headBlock = await withRetry(() => client.getBlock({ blockNumber: head }))
    await repos.chain.setHead(chainId, {
      number: head,
      time: new Date(Number(headBlock.timestamp) * 1000),
    })
    const rolledBackFrom = await checkReorg(head)
    const inserted: Partial<Record<EventTable, number>> = {}
    const reports: string[] = []
    for (const stream of streams) {
      const cursor = await repos.chain.cursor(chainId, stream.name)
      // each contract from its own first block (a RedeemManager deployed months after River scans no earlier range)
      const from = cursor ? BigInt(cursor.block_number) + 1n : contracts.startBlocks[stream.name]
      if (from > target) continue
      for await (const chunk of fetcher.iterateLogs({
        address: stream.address,
        abi: stream.abi,
        fromBlock: from,
        toBlock: target,
      })) {
        const converted = await rows(chunk.logs)
        const end = await block(chunk.toBlock)
        await inTransaction(db, (txRepos) => writeChunk(txRepos, stream, chunk, converted, end))
        if (stream.name === 'river') await oracleVotes.afterChunk(chunk)
        for (const [table, list] of converted.tables) inserted[table] = (inserted[table] ?? 0) + list.length
        reports.push(...converted.reports)
        onProgress?.()
      }
    }
    if (reports.length > 0 || Object.keys(inserted).length > 0) {
      logger.info(
        { chain_id: chainId, head: head.toString(), target: target.toString(), inserted, reports },
        'chain synced',
      )
    }
    return { head, target, rolledBackFrom, inserted, reports }
  }

  return {
    /**
     * Ingests everything new up to head - confirmations. One sync of a chain at a time across every worker
     * (db/exclusive.ts): a second waits for the first, then finds only what came since. Two at once would
     * both write a chunk and could set the cursor back, applying permission changes out of order.
     * `onProgress` is called after each chunk written (a first sync of a long history is many chunks).
     */
    async syncOnce(onProgress?: () => void): Promise<SyncResult> {
      return (await alone(() => syncAlone(onProgress), 'wait')) as SyncResult
    },
  }
}

export type Follower = ReturnType<typeof createFollower>
