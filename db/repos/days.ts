import type { Queryable } from '../index.ts'

/** Status of a day: its records are visible (`computed`), being written, waiting, or failed. */
export type DayStatus = 'pending' | 'computing' | 'computed' | 'failed'

/** A day: one final oracle report and the state of its computed records. */
export interface DayRow {
  chain_id: number
  report_epoch: string
  /** UTC date of the report's block, YYYY-MM-DD. */
  date: string
  block_number: string
  tx_index: number
  log_index: number
  block_hash: string
  block_time: Date
  previous_epoch: string | null
  status: DayStatus
  reason: string | null
  visible_version: number | null
  computing_version: number | null
  last_version: number
  shards: number | null
  wallets: number | null
  engine_version: string | null
  content_hash: string | null
  /**
   * The scheme of `content_hash` (jobs/days/content-hash.ts: 2, a function of the records alone); null for a
   * version published before migration 019, hashed by its shard layout.
   */
  content_hash_scheme: number | null
  based_on_hash: string | null
  error: string | null
  requested_at: Date
  started_at: Date | null
  computed_at: Date | null
  duration_ms: number | null
}

/** The next day to work on, with what its predecessor holds now. */
export interface NextDay extends DayRow {
  predecessor_status: DayStatus | null
  predecessor_hash: string | null
  predecessor_version: number | null
}

/** Selects every column of `days`, the date as YYYY-MM-DD text (never a local-time Date). */
const DAY_COLUMNS = (tx: Queryable, alias = 'days') => [
  `${alias}.*`,
  tx.raw(`to_char(${alias}.date, 'YYYY-MM-DD') as date`),
]

/** Why an operator asks for a recompute: the restatement log's reason for the versions it makes. */
export const RECOMPUTE_REASONS = [
  'discount',
  'fee schedule',
  'engine upgrade',
  'recompute requested',
] as const
/** A reason an operator gives a recompute. */
export type RecomputeReason = (typeof RECOMPUTE_REASONS)[number]
/** Why a version of a day was made (README "For finance", restatements). */
export type RestatementReason = 'first' | 'reorg' | 'predecessor restated' | RecomputeReason

/**
 * The restatement reason of a run about to be published, from its day as the run found it: its first
 * version; a reorg (the report moved or the chain rolled back); a recompute asked with a reason; or the
 * predecessor's figures changed under it.
 */
export function restatementReason(day: Pick<DayRow, 'visible_version' | 'reason'>): RestatementReason {
  if (day.visible_version === null) return 'first'
  if (day.reason !== null && /reorg/.test(day.reason)) return 'reorg'
  const asked = RECOMPUTE_REASONS.find((r) => r === day.reason)
  return asked ?? 'predecessor restated'
}

/** Tables holding a day's computed records (all keyed by chain_id, report_epoch, version). */
export const RECORD_TABLES = [
  'wallet_records',
  'account_records',
  'protocol_records',
  'fee_records',
  'operator_fee_records',
  'day_reconciliations',
  'day_shards',
] as const

/** The days table: which reports have records, which version readers see, what is left to compute. */
export function createDaysRepo(db: Queryable) {
  return {
    /**
     * Adds a pending day for every oracle report at or below `upToBlock` that has none, and sends back to
     * pending every day whose report moved (a reorg re-mined it or changed its predecessor). Days whose
     * report is gone (rolled back) are deleted with their records. Returns how many days were added, re-opened
     * and deleted.
     */
    async syncWithReports(
      chainId: number,
      upToBlock: bigint,
    ): Promise<{ added: number; reopened: number; deleted: number }> {
      const reports = `select r.chain_id, r.epoch::bigint as report_epoch, r.report_date as date, r.block_number,
          r.tx_index, r.log_index, r.block_hash, r.block_time,
          lag(r.epoch::bigint) over (order by r.block_number, r.log_index) as previous_epoch
        from oracle_reports r where r.chain_id = ? and r.block_number <= ?`
      const bindings = [chainId, upToBlock.toString()]
      const orphans: { report_epoch: string }[] = await db('days')
        .select('report_epoch')
        .where({ chain_id: chainId })
        .whereNotExists((q) =>
          q
            .select(db.raw('1'))
            .from('oracle_reports as r')
            .whereRaw('r.chain_id = days.chain_id and r.epoch::bigint = days.report_epoch'),
        )
      for (const { report_epoch: epoch } of orphans) {
        for (const table of [...RECORD_TABLES, 'report_versions']) {
          await db(table).where({ chain_id: chainId, report_epoch: epoch }).delete()
        }
        await db('days').where({ chain_id: chainId, report_epoch: epoch }).delete()
      }
      const reopened = await db.raw(
        `update days d set status = 'pending', reason = 'report moved (reorg)', block_number = x.block_number,
           tx_index = x.tx_index, log_index = x.log_index, block_hash = x.block_hash, block_time = x.block_time,
           date = x.date, previous_epoch = x.previous_epoch, requested_at = now()
         from (${reports}) x
         where d.chain_id = x.chain_id and d.report_epoch = x.report_epoch
           and (d.block_hash <> x.block_hash or d.previous_epoch is distinct from x.previous_epoch)`,
        bindings,
      )
      const added = await db.raw(
        `insert into days (chain_id, report_epoch, date, block_number, tx_index, log_index, block_hash,
           block_time, previous_epoch, status)
         select x.chain_id, x.report_epoch, x.date, x.block_number, x.tx_index, x.log_index, x.block_hash,
           x.block_time, x.previous_epoch, 'pending' from (${reports}) x
         on conflict (chain_id, report_epoch) do nothing`,
        bindings,
      )
      return { added: added.rowCount ?? 0, reopened: reopened.rowCount ?? 0, deleted: orphans.length }
    },

    /**
     * The earliest day (chain order) whose visible records are not current: not computed yet, failed, being
     * computed, or computed on a version of its predecessor that has since changed. Days are computed in
     * chain order, so every day before it is current.
     */
    async next(chainId: number): Promise<NextDay | undefined> {
      // the predecessor by its key, one primary-key lookup per day (LATERAL ... LIMIT 1, which the planner
      // cannot flatten into a join): a plain join turned quadratic (a nested loop over every day for each
      // day) on statistics taken before a backfill added its days, 0.3 s a call at 700 days
      const row = await db('days as d')
        .joinRaw(
          `left join lateral (select status, content_hash, visible_version from days p0
             where p0.chain_id = d.chain_id and p0.report_epoch = d.previous_epoch limit 1) p on true`,
        )
        .select(
          ...DAY_COLUMNS(db, 'd'),
          'p.status as predecessor_status',
          'p.content_hash as predecessor_hash',
          'p.visible_version as predecessor_version',
        )
        .where('d.chain_id', chainId)
        .where((q) =>
          q.whereNot('d.status', 'computed').orWhereRaw('d.based_on_hash is distinct from p.content_hash'),
        )
        .orderBy([{ column: 'd.block_number' }, { column: 'd.log_index' }])
        .first()
      return row as NextDay | undefined
    },

    /** The day row of one report epoch on a chain, or undefined. */
    async get(chainId: number, epoch: string | bigint): Promise<DayRow | undefined> {
      const row = await db('days')
        .select(DAY_COLUMNS(db))
        .where({ chain_id: chainId, report_epoch: epoch.toString() })
        .first()
      return row as DayRow | undefined
    },

    /**
     * The days being computed, with their run's version and age in ms on the database's clock (null: never
     * stamped), for the scheduler's abandoned-run check. Their rows stay locked for the rest of the caller's
     * transaction (the scheduler's): a run's finalization (which locks its day first) commits before this
     * read, or waits until the scheduler's decision is committed, never in between.
     */
    async computingRuns(
      chainId: number,
    ): Promise<{ report_epoch: string; computing_version: number | null; age_ms: number | null }[]> {
      return db('days')
        .select(
          'report_epoch',
          'computing_version',
          db.raw('(extract(epoch from clock_timestamp() - started_at) * 1000)::float8 as age_ms'),
        )
        .where({ chain_id: chainId, status: 'computing' })
        .orderBy([{ column: 'block_number' }, { column: 'log_index' }])
        .forUpdate()
    },

    /** Opens a new run (version) of a day: status computing. Returns the version. */
    async startRun(chainId: number, epoch: string, shards: number): Promise<number> {
      const [row] = await db('days')
        .where({ chain_id: chainId, report_epoch: epoch })
        .update({
          status: 'computing',
          computing_version: db.raw('last_version + 1'),
          last_version: db.raw('last_version + 1'),
          shards,
          error: null,
          // this statement's time, just before the commit, not the transaction's start: a run's age counts from it
          started_at: db.raw('clock_timestamp()'),
        })
        .returning('computing_version')
      if (!row) throw new Error(`day ${chainId}/${epoch} does not exist`)
      return row.computing_version as number
    },

    /** Locks a day's row for the rest of the transaction (call on `inTransaction`'s repositories) and returns it. */
    async lock(chainId: number, epoch: string): Promise<DayRow | undefined> {
      const row = await db('days')
        .select(DAY_COLUMNS(db))
        .where({ chain_id: chainId, report_epoch: epoch })
        .forUpdate()
        .first()
      return row as DayRow | undefined
    },

    /** Marks the run `version` failed with its error (ignored when a newer run replaced it). */
    async failRun(chainId: number, epoch: string, version: number, error: string): Promise<void> {
      await db('days')
        .where({ chain_id: chainId, report_epoch: epoch, computing_version: version })
        .update({ status: 'failed', error: error.slice(0, 2000), computing_version: null })
    },

    /**
     * Makes `version` the visible one: status computed, with its figures, and logs it in the restatement log
     * (`report_versions`: the previous visible version's row closed at the same instant). Call on the
     * finalizing transaction's repositories.
     */
    async finishRun(
      chainId: number,
      epoch: string,
      done: {
        version: number
        wallets: number
        engineVersion: string
        contentHash: string
        /** The scheme of `contentHash` (null or absent: none known). */
        contentHashScheme?: number | null
        basedOnHash: string | null
        durationMs: number
        /** Why this version was made (`restatementReason`). */
        reason: RestatementReason
        /** The version it replaces (null: the day's first). */
        previousVersion: number | null
      },
    ): Promise<void> {
      // one statement (a round trip of the finalizing transaction): the day, the previous version's log row
      // closed and the new one opened at the same instant (the CTE `t` is evaluated once)
      await db.raw(
        `with t as materialized (select date_trunc('milliseconds', clock_timestamp()) as now),
           d as (update days set status = 'computed', reason = null, error = null, visible_version = ?,
               computing_version = null, wallets = ?, engine_version = ?, content_hash = ?,
               content_hash_scheme = ?, based_on_hash = ?, computed_at = now(), duration_ms = ?
             where chain_id = ? and report_epoch = ?),
           closed as (update report_versions set visible_until = (select now from t)
             where chain_id = ? and report_epoch = ? and visible_until is null)
         insert into report_versions (chain_id, report_epoch, version, content_hash, content_hash_scheme,
           engine_version, reason, previous_version, visible_from)
         values (?, ?, ?, ?, ?, ?, ?, ?, (select now from t))`,
        [
          done.version,
          done.wallets,
          done.engineVersion,
          done.contentHash,
          done.contentHashScheme ?? null,
          done.basedOnHash,
          done.durationMs,
          chainId,
          epoch,
          chainId,
          epoch,
          chainId,
          epoch,
          done.version,
          done.contentHash,
          done.contentHashScheme ?? null,
          done.engineVersion,
          done.reason,
          done.previousVersion,
        ],
      )
    },

    /**
     * Ends a run whose records equal the visible version's without publishing it: the day is computed again,
     * on the predecessor version it was computed on (`basedOnHash`), its visible version, content hash and
     * restatement log unchanged (the run's records are then hidden: `deleteHiddenVersions`). Call on the
     * finalizing transaction's repositories.
     */
    async keepVisible(
      chainId: number,
      epoch: string,
      done: { version: number; basedOnHash: string | null; durationMs: number },
    ): Promise<void> {
      await db('days')
        .where({ chain_id: chainId, report_epoch: epoch, computing_version: done.version })
        .update({
          status: 'computed',
          reason: null,
          error: null,
          computing_version: null,
          based_on_hash: done.basedOnHash,
          computed_at: db.fn.now(),
          duration_ms: done.durationMs,
        })
    },

    /**
     * Deletes the records of the versions of a day that were never published (abandoned or failed runs):
     * the visible version, the one being computed and every version of the restatement log keep theirs.
     */
    async deleteHiddenVersions(chainId: number, epoch: string): Promise<void> {
      const day = await db<DayRow>('days').where({ chain_id: chainId, report_epoch: epoch }).first()
      if (!day) return
      // the versions to keep as index ranges around them (`version <> v` would read every row of the day)
      const keep = [...new Set([day.visible_version, day.computing_version])]
        .filter((v): v is number => v !== null)
        .sort((a, b) => a - b)
      const ranges = keep.length === 0 ? ['true'] : ['t.version < ?']
      for (let i = 1; i < keep.length; i++) ranges.push('(t.version > ? and t.version < ?)')
      if (keep.length > 0) ranges.push('t.version > ?')
      const rangeBindings = keep.flatMap((v, i) => (i === 0 ? [v] : [keep[i - 1] as number, v]))
      if (keep.length > 0) rangeBindings.push(keep.at(-1) as number)
      const deletes = RECORD_TABLES.map(
        (table, i) =>
          `d${i} as (delete from ${table} t where t.chain_id = ? and t.report_epoch = ? and (${ranges.join(' or ')})
             and not exists (select 1 from report_versions v where v.chain_id = t.chain_id
               and v.report_epoch = t.report_epoch and v.version = t.version))`,
      )
      // one statement for every table
      await db.raw(`with ${deletes.join(', ')} select 1`, [
        ...RECORD_TABLES.flatMap(() => [chainId, epoch, ...rangeBindings]),
      ])
    },

    /**
     * Sends the days of a date range back to pending (an explicit recompute), with the reason the restatement
     * log will give their next versions. Returns how many.
     */
    async requestRecompute(
      chainId: number,
      range: { from: string; to: string },
      reason: RecomputeReason = 'recompute requested',
    ): Promise<number> {
      return db('days')
        .where({ chain_id: chainId })
        .whereBetween('date', [range.from, range.to])
        .whereNot('status', 'computing')
        .update({ status: 'pending', reason, requested_at: db.fn.now() })
    },

    /** Sends every day whose report is at or after `fromBlock` back to pending (a reorg rolled them back). */
    async markStaleFrom(chainId: number, fromBlock: bigint): Promise<number> {
      return db('days')
        .where({ chain_id: chainId })
        .where('block_number', '>=', fromBlock.toString())
        .update({ status: 'pending', reason: 'reorg', requested_at: db.fn.now() })
    },

    /** Days in chain order, optionally within a date range. */
    async list(chainId: number, range: { from?: string; to?: string } = {}): Promise<DayRow[]> {
      return db('days')
        .select(DAY_COLUMNS(db))
        .where({ chain_id: chainId })
        .modify((q) => {
          if (range.from) q.where('date', '>=', range.from)
          if (range.to) q.where('date', '<=', range.to)
        })
        .orderBy([{ column: 'block_number' }, { column: 'log_index' }])
    },

    /** The chain ids that have days (the operator views list every chain the service follows). */
    async chainIds(): Promise<number[]> {
      const rows: { chain_id: number }[] = await db('days').distinct('chain_id').orderBy('chain_id')
      return rows.map((r) => r.chain_id)
    },
  }
}
/** The days repository `createDaysRepo` returns. */
export type DaysRepo = ReturnType<typeof createDaysRepo>
