/**
 * The follower's check of the oracle members' votes (docs/chain.md "Oracle votes not booked"): after a chunk of
 * River's logs is stored, the Oracle's vote events cast for each booked report of the chunk (after the previous
 * booked report, up to this one: one log query over that range) are compared with the report River booked. Each
 * vote that differs gives one warning naming the epoch, the member, the vote's place, what differs and why it
 * was not booked: for a 1.x vote, River's own answer to it (`chain/report-simulation.ts`: refused with its
 * revert, or accepted, so the vote was outvoted); a 0.4.0 vote was outvoted. Nothing is stored, and nothing here
 * fails the follower: an RPC error leaves a warning and the check moves on.
 */

import type { ChainContracts } from '../../chain/addresses.ts'
import type { ChainClient } from '../../chain/client.ts'
import type { DecodedLog } from '../../chain/log-decoding.ts'
import type { LogFetcher } from '../../chain/log-fetcher.ts'
import {
  bookedReportOf,
  type LogPlace,
  type OracleVote,
  oracleVoteOf,
  oracleVotesAbi,
  type ReportOnChain,
  reportDifferences,
  votesFor,
} from '../../chain/oracle-votes.ts'
import { simulateRiverReport } from '../../chain/report-simulation.ts'
import { shortMessage } from '../../chain/rpc-values.ts'
import type { Logger } from '../../common/logger.ts'
import type { Repos } from '../../db/repos/index.ts'
import { isReportLog } from './event-rows.ts'

/** What the check reads and where it writes its warnings. */
export interface OracleVoteCheckDeps {
  client: ChainClient
  fetcher: LogFetcher
  chainId: number
  contracts: ChainContracts
  logger: Logger
  repos: Pick<Repos, 'chain'>
}

/** Why a vote was not booked: River refuses it, it was outvoted, or the simulation that would say failed. */
type NotBookedReason = 'refused' | 'outvoted' | 'unknown'

type Place = Pick<LogPlace, 'blockNumber' | 'logIndex'>

/**
 * Creates the check; `afterChunk` is called with each chunk of River's logs once it is stored, in chain order.
 * It remembers the last booked report it saw and the last block it was given, so consecutive chunks need no
 * database read; any other chunk (a new process, another worker's sync in between, a reorg's rollback) finds
 * the previous report in `oracle_reports`.
 *
 * @example
 * const votes = createOracleVoteCheck({ client, fetcher, chainId, contracts, logger, repos })
 * await votes.afterChunk(chunk) // warnings only; never throws
 */
export function createOracleVoteCheck(deps: OracleVoteCheckDeps) {
  const { client, fetcher, chainId, contracts, logger } = deps
  let scannedTo: bigint | undefined
  let lastReport: Place | undefined

  /** The booked report before `fromBlock`: remembered when the chunks follow each other, else stored. */
  async function reportBefore(fromBlock: bigint): Promise<Place | undefined> {
    if (scannedTo !== undefined && fromBlock === scannedTo + 1n) return lastReport
    const rows = await deps.repos.chain.oracleReports(chainId)
    let found: Place | undefined
    for (const row of rows) {
      const place = { blockNumber: BigInt(row.block_number), logIndex: Number(row.log_index) }
      if (place.blockNumber < fromBlock) found = place
    }
    return found
  }

  /** Why `vote` was not booked, asking River at the vote's block, or the block before the report's. */
  async function whyNotBooked(
    vote: OracleVote,
    booked: ReportOnChain,
  ): Promise<{ reason: NotBookedReason; why: string; error?: string }> {
    const outvoted = { reason: 'outvoted', why: 'did not reach quorum (outvoted)' } as const
    if (vote.shape !== 'v1' || !vote.report || !contracts.oracle) return outvoted
    // the state the vote met: before the booked report (a vote in the report's block is asked a block earlier)
    const blockNumber = vote.blockNumber < booked.blockNumber ? vote.blockNumber : booked.blockNumber - 1n
    const answer = await simulateRiverReport(client, {
      river: contracts.river,
      oracle: contracts.oracle,
      report: vote.report,
      blockNumber,
    })
    if (answer.outcome === 'accepted') return outvoted
    if (answer.outcome === 'refused') return { reason: 'refused', why: `River refuses it: ${answer.reason}` }
    return { reason: 'unknown', why: "River's answer is unknown: its simulation failed", error: answer.error }
  }

  /** Compares the votes of each booked report of `reports` with it; one warning per differing vote. */
  async function check(reports: ReportOnChain[], after: Place | undefined) {
    const oracle = contracts.oracle
    const last = reports.at(-1)
    if (!oracle || !last) return
    const fromBlock = after?.blockNumber ?? contracts.startBlocks.oracle ?? contracts.startBlock
    const votes = (
      await fetcher.fetchLogs({ address: oracle, abi: oracleVotesAbi, fromBlock, toBlock: last.blockNumber })
    )
      .map(oracleVoteOf)
      .filter((vote): vote is OracleVote => vote !== undefined)
    let previous = after
    for (const booked of reports) {
      for (const vote of votesFor(votes, previous, booked)) {
        const differences = reportDifferences(booked, vote)
        if (Object.keys(differences).length === 0) continue
        const { reason, why, error } = await whyNotBooked(vote, booked)
        logger.warn(
          {
            chain_id: chainId,
            epoch: booked.epoch.toString(),
            member: vote.member,
            reason,
            why,
            ...(error === undefined ? {} : { error }),
            differences,
            vote_block_number: vote.blockNumber.toString(),
            vote_tx_hash: vote.transactionHash,
            vote_log_index: vote.logIndex,
            booked_block_number: booked.blockNumber.toString(),
            booked_tx_hash: booked.transactionHash,
          },
          'oracle vote not booked',
        )
      }
      previous = booked
    }
  }

  return {
    /**
     * Checks the votes of the booked reports of a stored chunk of River's logs (warnings only, see the file
     * comment). Never throws: a failure is logged ('oracle votes not checked') and the next chunk goes on.
     */
    async afterChunk(chunk: { fromBlock: bigint; toBlock: bigint; logs: readonly DecodedLog[] }) {
      const reports = chunk.logs
        .filter(isReportLog)
        .map(bookedReportOf)
        .filter((r): r is ReportOnChain => r !== undefined)
      try {
        if (reports.length > 0) await check(reports, await reportBefore(chunk.fromBlock))
      } catch (err) {
        logger.warn(
          {
            chain_id: chainId,
            epochs: reports.map((r) => r.epoch.toString()),
            error: shortMessage(err),
          },
          'oracle votes not checked',
        )
      }
      // what the next chunk needs: the newest booked report up to here, known only along consecutive chunks
      const newest = reports.at(-1)
      const consecutive = scannedTo !== undefined && chunk.fromBlock === scannedTo + 1n
      if (newest) lastReport = newest
      scannedTo = newest || consecutive ? chunk.toBlock : undefined
    },
  }
}

/** The oracle vote check of one follower (`createOracleVoteCheck`). */
export type OracleVoteCheck = ReturnType<typeof createOracleVoteCheck>
