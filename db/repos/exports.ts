import type { Queryable } from '../index.ts'
import { isUuid } from './accounts.ts'

/** queued -> running -> completed | failed (a retried job goes back through running, its file started over). */
export type ExportState = 'queued' | 'running' | 'completed' | 'failed'

/**
 * What an export was asked for, as the API checked it: the fields of the builder's `ExportSpec`
 * (jobs/exports/build.ts) other than the chain and the organization, which are columns.
 */
export interface StoredExportSpec {
  /** null: every account of the organization. */
  accountIds: string[] | null
  from: string
  to: string
  granularity: 'day' | 'month' | 'quarter' | 'year'
  currency: string | null
  kind: 'records' | 'journal'
  apiVersion: 'v1' | 'v0'
  format: 'csv'
  /** Ledger names renamed by the operator (engine/journal.ts `JournalAccountMapping`). */
  journalAccounts?: Record<string, string>
}

/** An export request and where its file stands. Counts are strings (int8). */
export interface ExportRow {
  id: string
  org_id: string
  chain_id: number
  client_id: string
  spec: StoredExportSpec
  state: ExportState
  progress_done: string
  progress_total: string
  rows: string | null
  bytes: string | null
  sha256: string | null
  error: string | null
  attempts: number
  created_at: Date
  updated_at: Date
  completed_at: Date | null
  /** When the file (and the row) is deleted: completed_at (or the failure) + the retention. */
  expires_at: Date | null
}

/** Chunks read per query when a file is streamed out (~1 MiB each: a few MiB in memory at most). */
const CHUNKS_PER_PAGE = 4

/**
 * Export requests and their files, kept in the database as ordered chunks so any API process serves a file a
 * worker elsewhere built, on Postgres and PGlite alike.
 */
export function createExportsRepo(db: Queryable) {
  const byId = (id: string) => db('exports').where({ id })
  return {
    /** Records a request, queued. */
    async create(input: {
      id: string
      orgId: string
      chainId: number
      clientId: string
      spec: StoredExportSpec
    }): Promise<ExportRow> {
      const [row] = await db<ExportRow>('exports')
        .insert({
          id: input.id,
          org_id: input.orgId,
          chain_id: input.chainId,
          client_id: input.clientId,
          spec: JSON.stringify(input.spec) as unknown as StoredExportSpec,
        })
        .returning('*')
      return row!
    },
    /** The organization's export; another organization's id answers like an unknown one (undefined). */
    async get(orgId: string, id: string): Promise<ExportRow | undefined> {
      if (!isUuid(id)) return undefined
      return db<ExportRow>('exports').where({ org_id: orgId, id: id.toLowerCase() }).first()
    },
    /** An export by id alone (the job's view). */
    async byId(id: string): Promise<ExportRow | undefined> {
      if (!isUuid(id)) return undefined
      return byId(id).first()
    },
    /** Exports waiting for a job or being built, oldest first (the dispatch pass enqueues them, deduplicated). */
    async unfinished(limit: number): Promise<Pick<ExportRow, 'id'>[]> {
      return db('exports')
        .whereIn('state', ['queued', 'running'])
        .orderBy('created_at')
        .limit(limit)
        .select('id')
    },
    /**
     * Starts (or starts over) the file of an unfinished export: state running, progress and its chunks
     * cleared. False when the export is finished (or gone): the job has nothing to do.
     */
    async start(id: string, attempt: number): Promise<boolean> {
      return db.transaction(async (tx) => {
        const updated = await tx('exports').where({ id }).whereIn('state', ['queued', 'running']).update({
          state: 'running',
          attempts: attempt,
          progress_done: 0,
          progress_total: 0,
          error: null,
          updated_at: tx.fn.now(),
        })
        if (updated === 0) return false
        await tx('export_chunks').where({ export_id: id }).delete()
        return true
      })
    },
    /** Records how far the build is. */
    async progress(id: string, done: number, total: number): Promise<void> {
      await byId(id).update({ progress_done: done, progress_total: total, updated_at: db.fn.now() })
    },
    /** Appends one piece of the file (`seq` from 0, in order). */
    async appendChunk(id: string, seq: number, data: Buffer): Promise<void> {
      await db('export_chunks').insert({ export_id: id, seq, data })
    },
    /** Marks the file complete, kept `retentionMs` from now; the row as it is now. */
    async complete(
      id: string,
      result: { rows: number; bytes: number; sha256: string },
      retentionMs: number,
    ): Promise<ExportRow> {
      const [row] = await byId(id)
        .update({
          state: 'completed',
          rows: result.rows,
          bytes: result.bytes,
          sha256: result.sha256,
          progress_done: db.raw('greatest(progress_done, progress_total)'),
          error: null,
          completed_at: db.fn.now(),
          updated_at: db.fn.now(),
          expires_at: db.raw(`now() + ?::interval`, [`${retentionMs} milliseconds`]),
        })
        .returning('*')
      return row!
    },
    /** Marks the export failed with its error (its chunks deleted), kept `retentionMs` for its requester to read. */
    async fail(id: string, error: string, retentionMs: number): Promise<void> {
      await db.transaction(async (tx) => {
        await tx('export_chunks').where({ export_id: id }).delete()
        await tx('exports')
          .where({ id })
          .update({
            state: 'failed',
            error,
            updated_at: tx.fn.now(),
            expires_at: tx.raw(`now() + ?::interval`, [`${retentionMs} milliseconds`]),
          })
      })
    },
    /**
     * The file's chunks in order, read `CHUNKS_PER_PAGE` at a time (by seq, so memory stays bounded whatever
     * the file's size).
     */
    async *chunks(id: string): AsyncGenerator<Buffer> {
      let next = 0
      for (;;) {
        const page: { seq: number; data: Buffer }[] = await db('export_chunks')
          .where({ export_id: id })
          .andWhere('seq', '>=', next)
          .orderBy('seq')
          .limit(CHUNKS_PER_PAGE)
          .select('seq', 'data')
        for (const c of page) yield c.data
        if (page.length < CHUNKS_PER_PAGE) return
        next = (page.at(-1)?.seq ?? next) + 1
      }
    },
    /** Deletes exports (and their files) past `expires_at`, at most `limit`; how many. */
    async deleteExpired(limit: number): Promise<number> {
      return db('exports')
        .whereIn('id', (q) =>
          q.select('id').from('exports').where('expires_at', '<=', db.fn.now()).limit(limit),
        )
        .delete()
    },
  }
}
