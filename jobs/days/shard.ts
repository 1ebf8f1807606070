import { createHash } from 'node:crypto'
import type { Db } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { DayKey, ShardResult } from '../../db/repos/records.ts'
import { emptyFeeSummary, encodeFeeSummary } from '../../engine/index.ts'
import type { DayFlows } from './day-flows.ts'
import { type DayInputs, describeReport } from './inputs.ts'
import { type ShardRowsOutput, shardChunks } from './shard-rows.ts'
import { shardRange } from './shards.ts'

/** A shard job's payload. */
export interface ShardJob {
  chainId: number
  epoch: string
  version: number
  shard: number
  shards: number
}

/**
 * Computes and writes the wallet records of one shard (an address range) of a day: every address that held
 * LsETH at the previous report or moved LsETH since, with balance = previous balance + the period's
 * transfers (the report transaction's included: the balance at the end of it), rewards on the shares held
 * right before the report transaction, cumulative totals from the previous record, and attribution
 * (account, org, On-Platform, target fee rate) as of the report's block time. Dormant wallets (no transfer
 * in the period) take the dormant path, the others the engine (`shardChunks`). The previous day's rows are
 * read as COPY text (no object per row), the period's flows once per day (`flows`), and the rows are
 * written (COPY) while they are produced; the shard is replaced as a whole on a retry, and its hash and fee
 * summary are saved for the day's finalization.
 */
export async function computeShard(
  db: Db,
  inputs: DayInputs,
  job: ShardJob,
  flows: DayFlows,
): Promise<ShardResult> {
  const started = performance.now()
  const repos = createRepos(db)
  const key: DayKey = { chainId: job.chainId, epoch: job.epoch, version: job.version }
  const range = shardRange(job.shard, job.shards)
  // the previous day's rows stream in (a connection of their own) while this shard's rows stream out
  const opening = inputs.previousKey
    ? repos.records.openWalletTotals(inputs.previousKey, range)
    : Promise.resolve({ texts: [], close: async () => undefined })
  const [shardFlows, attributions, previous] = await Promise.allSettled([
    flows.forShard(inputs, key, range),
    repos.records.attributions(inputs.blockTime, range),
    opening,
  ])
  let result: ShardResult | undefined
  try {
    if (shardFlows.status === 'rejected') throw shardFlows.reason
    if (attributions.status === 'rejected') throw attributions.reason
    if (previous.status === 'rejected') throw previous.reason
    const targets = new Map<string, string>()
    for (const a of attributions.value) {
      if (a.target_fee_rate !== null) targets.set(a.account_id, a.target_fee_rate)
    }
    const out: ShardRowsOutput = { hash: createHash('sha256'), summary: emptyFeeSummary(), wallets: 0 }
    const chunks = shardChunks(
      {
        key,
        ctx: inputs.ctx,
        day: describeReport(inputs.day),
        previous: previous.value.texts,
        flows: shardFlows.value,
        attributions: new Map(attributions.value.map((row) => [row.address, row])),
        targets,
      },
      out,
    )
    // what the shard wrote is recorded in the same transaction, once its rows are in
    await repos.records.writeWalletShard(key, range, chunks, (rows) => {
      if (rows !== out.wallets)
        throw new Error(`shard ${job.shard}: ${rows} rows written, ${out.wallets} produced`)
      result = {
        shard: job.shard,
        wallets: rows,
        content_hash: out.hash.digest('hex'),
        fee_summary: encodeFeeSummary(out.summary),
        duration_ms: Math.round(performance.now() - started),
      }
      return result
    })
  } finally {
    if (previous.status === 'fulfilled') await previous.value.close()
  }
  if (!result) throw new Error(`shard ${job.shard} was written without its result`)
  return result
}
