import type { Db } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { DayKey, ShardResult } from '../../db/repos/records.ts'
import { emptyFeeSummary, encodeFeeSummary } from '../../engine/index.ts'
import { createContentTree } from './content-hash.ts'
import type { DayFlows } from './day-flows.ts'
import { type DayInputs, describeReport } from './inputs.ts'
import { type ShardRowsOutput, shardChunks } from './shard-rows.ts'
import { shardRange, spanRange } from './shards.ts'

/** A shard job's payload: shards `shard` .. `shard + span - 1` of the day's `shards`. */
export interface ShardJob {
  chainId: number
  epoch: string
  version: number
  shard: number
  shards: number
  /** How many consecutive shards the job computes (1 when absent: a job queued before spans). */
  span?: number
}

/**
 * Computes and writes the wallet records of consecutive shards (one address range) of a day: every address that held
 * LsETH at the previous report or moved LsETH since, with balance = previous balance + the period's
 * transfers (the report transaction's included: the balance at the end of it), rewards on the shares held
 * right before the report transaction, cumulative totals from the previous record, and attribution
 * (account, org, On-Platform, target fee rate) as of the report's block time. Dormant wallets (no transfer
 * in the period) take the dormant path, the others the engine (`shardChunks`). The previous day's rows are
 * read as COPY text (no object per row), the period's flows once per day (`flows`), and the rows are
 * written (COPY) while they are produced, in one transaction for the job; each shard's content hash (the
 * root of its subtree of the day's content tree: `content-hash.ts`), fee summary and count are saved for the
 * day's finalization (a row per shard). A retry replaces the job's range as a whole.
 */
export async function computeShard(
  db: Db,
  inputs: DayInputs,
  job: ShardJob,
  flows: DayFlows,
): Promise<{ wallets: number; duration_ms: number; shards: ShardResult[] }> {
  const started = performance.now()
  const repos = createRepos(db)
  const key: DayKey = { chainId: job.chainId, epoch: job.epoch, version: job.version }
  const span = job.span ?? 1
  const range = spanRange(job.shard, span, job.shards)
  // the previous day's rows stream in (a connection of their own) while this job's rows stream out. The
  // reads come first: a job holds two connections at most while it writes (jobs share a process's pool)
  const opening = inputs.previousKey
    ? repos.records.openWalletTotals(inputs.previousKey, range)
    : Promise.resolve({ texts: [], close: async () => undefined })
  const [shardFlows, attributions, previous] = await Promise.allSettled([
    flows.forShard(inputs, key, range),
    repos.records.attributions(inputs.blockTime, range),
    opening,
  ])
  let results: ShardResult[] | undefined
  try {
    if (shardFlows.status === 'rejected') throw shardFlows.reason
    if (attributions.status === 'rejected') throw attributions.reason
    if (previous.status === 'rejected') throw previous.reason
    const targets = new Map<string, string>()
    for (const a of attributions.value) {
      if (a.target_fee_rate !== null) targets.set(a.account_id, a.target_fee_rate)
    }
    const outs: ShardRowsOutput[] = Array.from({ length: span }, (_, i) => ({
      tree: createContentTree(job.shard + i, job.shards),
      summary: emptyFeeSummary(),
      wallets: 0,
    }))
    const bounds = outs.slice(1).map((_, i) => shardRange(job.shard + i + 1, job.shards).lo)
    const lines = shardChunks(
      {
        key,
        ctx: inputs.ctx,
        day: describeReport(inputs.day),
        previous: previous.value.texts,
        flows: shardFlows.value,
        attributions: new Map(attributions.value.map((row) => [row.address, row])),
        targets,
      },
      outs,
      bounds,
    )
    // the shards' hashes and fee summaries are final with their last line: made while the server ingests
    // the lines still on their way
    let done: { wallets: number; content_hash: string; fee_summary: unknown }[] | undefined
    async function* chunks() {
      yield* lines
      done = outs.map((o) => ({
        wallets: o.wallets,
        content_hash: o.tree.root(),
        fee_summary: encodeFeeSummary(o.summary),
      }))
    }
    // what the shards wrote is recorded in the same transaction, once their rows are in
    await repos.records.writeWalletShards(key, range, chunks(), (rows) => {
      const produced = outs.reduce((n, o) => n + o.wallets, 0)
      if (!done || rows !== produced) {
        throw new Error(`shards ${job.shard}+${span}: ${rows} rows written, ${produced} produced`)
      }
      // the job's time, shared among its shards by their wallets
      const ms = performance.now() - started
      results = done.map((d, i) => ({
        ...d,
        shard: job.shard + i,
        duration_ms: Math.round(produced === 0 ? ms / span : (ms * d.wallets) / produced),
      }))
      return results
    })
  } finally {
    if (previous.status === 'fulfilled') await previous.value.close()
  }
  if (!results) throw new Error(`shards ${job.shard}+${span} were written without their results`)
  return {
    wallets: results.reduce((n, r) => n + r.wallets, 0),
    duration_ms: Math.round(performance.now() - started),
    shards: results,
  }
}
