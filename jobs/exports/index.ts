import { finished } from 'node:stream/promises'
import { DomainError } from '../../common/errors.ts'
import type { Logger } from '../../common/logger.ts'
import type { Db } from '../../db/index.ts'
import type { ExportRow } from '../../db/repos/exports.ts'
import { createRepos, inTransaction } from '../../db/repos/index.ts'
import { InvalidInputError } from '../../engine/index.ts'
import { type JobInfo, type JobRunner, type Processor, UnrecoverableError } from '../runner.ts'
import { buildExport, type ExportProgress, type ExportSpec } from './build.ts'
import { chunkSink } from './chunk-sink.ts'

/** Job names: the periodic dispatch pass and the build of one export. */
export const EXPORT_JOBS = { dispatch: 'exports', build: 'export.build' } as const

/** How long a file (and its row) is kept after it completed or failed: 7 days (docs/interface.md "Exports"). */
export const EXPORT_RETENTION_MS = 7 * 24 * 3_600_000
/** Progress is written to the export's row at most this often. */
const PROGRESS_EVERY_MS = 1_000
/** Unfinished exports a dispatch pass hands to the runner, and expired ones it deletes. */
const DISPATCH_BATCH = 100
/** Attempts of a build before the export fails for good. */
const BUILD_ATTEMPTS = 3

/** The deterministic id of an export's build job (one live job per export, on either runner). */
export function exportJobId(exportId: string): string {
  return `export-${exportId}`
}

/** The builder's spec of a stored export request. */
function specOf(row: ExportRow): ExportSpec {
  const s = row.spec
  return {
    chainId: row.chain_id,
    orgId: row.org_id,
    accountIds: s.accountIds,
    from: s.from,
    to: s.to,
    granularity: s.granularity,
    currency: s.currency,
    kind: s.kind,
    apiVersion: s.apiVersion,
    ...(s.journalAccounts ? { journalAccounts: s.journalAccounts } : {}),
  }
}

/**
 * The export processors. The API only records a request (state queued, `POST /v1/exports`): the dispatch pass
 * (every second) hands each unfinished export to the runner as an `export.build` job with the export's own job
 * id (a live job is never added twice, and an export whose job was lost with its process is picked up again),
 * and deletes expired files. The build streams the builder's CSV into ~1 MiB chunks in the database
 * (chunk-sink.ts), writes its progress (throttled) and, on success, completes the export and emits
 * `export.completed` in one transaction. A retried build starts its file over; a build that fails for good (a
 * domain error, or its last attempt) marks the export failed with the error.
 */
export function createExportJobs(deps: {
  db: Db
  logger: Logger
  runner: () => JobRunner
}): Record<string, Processor> {
  const repos = createRepos(deps.db)
  const logger = deps.logger.child({ component: 'exports' })

  async function build(job: JobInfo) {
    const id = (job.data as { exportId?: unknown } | null)?.exportId
    if (typeof id !== 'string') throw new UnrecoverableError(`malformed ${job.name} payload`)
    const row = await repos.exports.byId(id)
    if (!row || !(await repos.exports.start(id, job.attemptsMade + 1))) return { skipped: 'finished' }
    let last = 0
    let latest: ExportProgress | undefined
    const onProgress = (p: ExportProgress) => {
      latest = p
      job.progress?.()
      const now = Date.now()
      if (now - last < PROGRESS_EVERY_MS) return
      last = now
      repos.exports
        .progress(id, p.done, p.total)
        .catch((err) => logger.warn({ err, export_id: id }, 'export progress not recorded'))
    }
    try {
      const sink = chunkSink(async (seq, data) => {
        await repos.exports.appendChunk(id, seq, data)
        job.progress?.()
      })
      const result = await buildExport(repos, specOf(row), sink, onProgress)
      if (!sink.writableEnded) sink.end()
      await finished(sink)
      const stored = sink.stored()
      if (stored.bytes !== result.bytes || stored.sha256 !== result.sha256) {
        throw new Error(
          `export ${id}: the builder reported ${result.bytes} bytes (sha256 ${result.sha256}) but ` +
            `${stored.bytes} bytes (sha256 ${stored.sha256}) were stored`,
        )
      }
      if (latest) await repos.exports.progress(id, latest.done, latest.total)
      const done = await inTransaction(deps.db, async (tx) => {
        const completed = await tx.exports.complete(id, result, EXPORT_RETENTION_MS)
        await tx.webhooks.emitExportCompleted(completed)
        return completed
      })
      logger.info(
        { export_id: id, org_id: row.org_id, rows: result.rows, bytes: result.bytes, chunks: stored.chunks },
        'export completed',
      )
      return { rows: done.rows, bytes: done.bytes }
    } catch (err) {
      const domain = err instanceof DomainError || err instanceof InvalidInputError
      if (domain || job.attemptsMade + 1 >= job.attempts) {
        await repos.exports.fail(id, (err as Error).message, EXPORT_RETENTION_MS)
        logger.error({ err, export_id: id, job_id: job.id }, 'export failed')
        throw new UnrecoverableError((err as Error).message)
      }
      throw err
    }
  }

  return {
    [EXPORT_JOBS.dispatch]: async () => {
      const deleted = await repos.exports.deleteExpired(DISPATCH_BATCH)
      const unfinished = await repos.exports.unfinished(DISPATCH_BATCH)
      const runner = deps.runner()
      for (const { id } of unfinished) {
        await runner.enqueue(
          EXPORT_JOBS.build,
          { exportId: id },
          { jobId: exportJobId(id), attempts: BUILD_ATTEMPTS },
        )
      }
      return { enqueued: unfinished.length, deleted }
    },
    [EXPORT_JOBS.build]: build,
  }
}
