import { createHash } from 'node:crypto'
import type { Address } from '../../common/address.ts'
import type { BulkValue } from '../../db/bulk.ts'
import type { Db } from '../../db/index.ts'
import { WALLET_RECORD_COLUMNS, WALLET_TOTAL_COLUMNS } from '../../db/records/columns.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { AttributionRow, DayKey, PreviousWalletRow, ShardResult } from '../../db/repos/records.ts'
import {
  computeWalletRecord,
  ENGINE_VERSION,
  EngineError,
  encodeFeeSummary,
  type FeeSummaryItem,
  summarizeFees,
  type WalletRecord,
  type WalletTotals,
} from '../../engine/index.ts'
import { DayDataError } from './errors.ts'
import { type DayInputs, describeReport } from './inputs.ts'
import { shardRange } from './shards.ts'

/** A shard job's payload. */
export interface ShardJob {
  chainId: number
  epoch: string
  version: number
  shard: number
  shards: number
}

function totalsOf(row: PreviousWalletRow): WalletTotals {
  const totals = {} as Record<string, bigint>
  for (const column of WALLET_TOTAL_COLUMNS) totals[column] = BigInt(row[column])
  return totals as unknown as WalletTotals
}

/** The values of one stored wallet record, in `WALLET_RECORD_COLUMNS` order. */
function recordValues(key: DayKey, record: WalletRecord, originator: string | null): BulkValue[] {
  const source = record as unknown as Record<string, BulkValue>
  return WALLET_RECORD_COLUMNS.map((column) => {
    switch (column) {
      case 'chain_id':
        return key.chainId
      case 'report_epoch':
        return key.epoch
      case 'version':
        return key.version
      case 'originator_org_id':
        return originator
      case 'engine_version':
        return ENGINE_VERSION
      default:
        return source[column] ?? null
    }
  })
}

/**
 * Computes and writes the wallet records of one shard (an address range) of a day: every address that held
 * LsETH at the previous report or moved LsETH since, with balance = previous balance + the period's
 * transfers (the report transaction's included: the balance at the end of it), rewards on the shares held
 * right before the report transaction, cumulative totals from the previous record, and attribution
 * (account, org, On-Platform, target fee rate) as of the report's block time. The rows are produced while
 * they are written (COPY), the shard is replaced as a whole on a retry, and its hash and fee summary are
 * saved for the day's finalization.
 */
export async function computeShard(
  db: Db,
  inputs: DayInputs,
  job: ShardJob,
  burnAddresses: readonly Address[],
): Promise<ShardResult> {
  const started = performance.now()
  const repos = createRepos(db)
  const key: DayKey = { chainId: job.chainId, epoch: job.epoch, version: job.version }
  const range = shardRange(job.shard, job.shards)
  const [previousRows, flows, attributions] = await Promise.all([
    inputs.previousKey ? repos.records.walletTotals(inputs.previousKey, range) : Promise.resolve([]),
    repos.records.periodFlows(job.chainId, inputs.window, range, burnAddresses),
    repos.records.attributions(inputs.blockTime, range),
  ])
  const previous = new Map(previousRows.map((row) => [row.address, row]))
  const flowByAddress = new Map(flows.map((row) => [row.address, row]))
  const attributionOf = new Map<string, AttributionRow>(attributions.map((row) => [row.address, row]))
  const targets = await repos.records.targetsAt(inputs.blockTime, [
    ...new Set(attributions.map((a) => a.account_id)),
  ])
  const addresses = [...new Set([...previous.keys(), ...flowByAddress.keys()])].sort()

  const hash = createHash('sha256')
  const items: FeeSummaryItem[] = []
  const ctx = inputs.ctx
  function* rows(): Generator<BulkValue[]> {
    for (const address of addresses) {
      const before = previous.get(address)
      const flow = flowByAddress.get(address)
      // the balance at the end of the report transaction, and the earning shares right before it
      const balance = (before ? BigInt(before.balance_lseth) : 0n) + (flow ? BigInt(flow.delta) : 0n)
      const reportDelta = flow ? BigInt(flow.report_delta) : 0n
      const shares = balance - reportDelta
      if (balance < 0n || shares < 0n) {
        throw new DayDataError(
          `${describeReport(inputs.day)}: the balance of ${address} would be negative (${shares} shares ` +
            `before the report transaction, ${balance} after it): transfers are missing or the previous day ` +
            'is inconsistent',
          { details: { address, shares: shares.toString(), balance: balance.toString() } },
        )
      }
      const who = attributionOf.get(address)
      let record: WalletRecord
      try {
        record = computeWalletRecord(ctx, {
          address,
          shares,
          report_delta: reportDelta,
          mints: flow ? BigInt(flow.mints) : 0n,
          burns: flow ? BigInt(flow.burns) : 0n,
          previous: before ? totalsOf(before) : null,
          account_id: who?.account_id ?? null,
          org_id: who?.org_id ?? null,
          on_platform: who?.on_platform ?? false,
          target_fee_rate: who ? (targets.get(who.account_id) ?? null) : null,
        })
      } catch (err) {
        if (err instanceof EngineError) {
          throw new DayDataError(`${describeReport(inputs.day)}: wallet ${address}: ${err.message}`, {
            details: { address, code: err.code },
            cause: err,
          })
        }
        throw err
      }
      items.push({ record, originator_org_id: who?.originator_org_id ?? null })
      yield recordValues(key, record, who?.originator_org_id ?? null)
    }
  }
  // the content hash leaves out the run's version (3rd column): the same inputs give the same hash in any
  // run. It hashes the line bulkWrite formats for COPY, so each row is formatted once.
  const hashLine = (line: string) => {
    const second = line.indexOf('\t', line.indexOf('\t') + 1)
    const third = line.indexOf('\t', second + 1)
    hash.update(`${line.slice(0, second + 1)}${line.slice(third + 1)}\n`)
  }
  const wallets = await repos.records.writeWalletShard(key, range, rows(), hashLine)
  const result: ShardResult = {
    shard: job.shard,
    wallets,
    content_hash: hash.digest('hex'),
    fee_summary: encodeFeeSummary(summarizeFees(items)),
    duration_ms: Math.round(performance.now() - started),
  }
  await repos.records.saveShard(key, result)
  return result
}
