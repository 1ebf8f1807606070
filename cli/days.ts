import cliProgress from 'cli-progress'
import type { Config } from '../common/config.ts'
import { LsReportError } from '../common/errors.ts'
import type { DayRow, RecomputeReason } from '../db/repos/days.ts'
import { createRepos } from '../db/repos/index.ts'
import {
  type BackfillProgress,
  backfillProgress,
  boundedScheduler,
  type DateRange,
  type FailedDay,
  startBackfill,
  validateRange,
} from '../jobs/days/backfill.ts'
import { DAY_JOBS } from '../jobs/days/index.ts'
import { type ChainSetup, createJobs } from '../jobs/index.ts'
import { setupFromConfig } from './chain-setup.ts'
import type { Context } from './context.ts'
import { formatTable } from './output.ts'
import { buildRunner } from './runner.ts'

/** How often the backfill looks at the days, and how often it nudges the scheduler. */
const POLL_MS = 500
const KICK_MS = 1_000
/** Plain progress lines (no terminal) at most this often. */
const LINE_MS = 2_000

/** Exit code of an interrupted backfill (128 + SIGINT). */
export const EXIT_INTERRUPTED = 130

/**
 * The chain whose days a command works on. The day jobs read only the database, so without RPC_URL (the
 * embedded setup, where `$DATA_DIR/devnet.json` names the chain) a placeholder URL stands in: no job of this
 * process dials it unless it serves follower jobs of a shared queue, which needs RPC_URL as every worker does.
 */
async function chainOf(config: Config): Promise<ChainSetup> {
  return setupFromConfig(config.rpcUrl ? config : { ...config, rpcUrl: 'http://127.0.0.1:8545' })
}

/** A day as `lsreport days --json` prints it (`computing` is reported as `pending`). */
export function dayJson(day: DayRow) {
  return {
    date: day.date,
    report_epoch: Number(day.report_epoch),
    status: day.status === 'computing' ? 'pending' : day.status,
    wallets: day.wallets,
    engine_version: day.engine_version,
    computed_at: day.computed_at ? day.computed_at.toISOString() : null,
  }
}

/** The days as a plain-text table (for humans). */
export function formatDaysTable(days: readonly DayRow[]): string {
  const header = [
    'date',
    'report_epoch',
    'status',
    'wallets',
    'engine_version',
    'computed_at',
    'duration_ms',
    'error',
  ]
  const rows = days.map((d) => [
    d.date,
    d.report_epoch,
    d.status,
    d.wallets === null ? '-' : String(d.wallets),
    d.engine_version ?? '-',
    d.computed_at ? d.computed_at.toISOString() : '-',
    d.duration_ms === null ? '-' : String(d.duration_ms),
    d.error ? oneLine(d.error, 80) : '',
  ])
  return formatTable(header, rows)
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** `lsreport days [--json] [--from D] [--to D]` */
export async function daysCommand(ctx: Context, opts: { json?: boolean; from?: string; to?: string }) {
  const range = {
    ...(opts.from ? { from: validateRange({ from: opts.from, to: opts.from }).from } : {}),
    ...(opts.to ? { to: validateRange({ from: opts.to, to: opts.to }).to } : {}),
  }
  const { chainId } = await chainOf(ctx.config)
  const days = await createRepos(ctx.dbh.db).days.list(chainId, range)
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(days.map(dayJson), null, 2)}\n`)
    return
  }
  process.stdout.write(`${formatDaysTable(days)}\n`)
  if (days.length === 0) process.stdout.write('(no days: run `lsreport sync` to ingest oracle reports)\n')
}

/** "22 s", "3 min 5 s", "2 h 4 min"; `unknown` before anything was computed. */
export function formatEta(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return 'unknown'
  const s = Math.max(0, Math.round(seconds))
  if (s < 120) return `${s} s`
  if (s < 7_200) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3_600)} h ${Math.floor((s % 3_600) / 60)} min`
}

/** Days per second computed by this run so far, and the time left at that rate. */
export function backfillRate(doneThisRun: number, elapsedMs: number, remaining: number) {
  const rate = elapsedMs > 0 ? doneThisRun / (elapsedMs / 1000) : 0
  return { rate: rate.toFixed(1), eta: formatEta(rate > 0 ? remaining / rate : undefined) }
}

/** The progress display: a bar on a terminal, plain lines (at most every 2 s) otherwise. */
export interface ProgressView {
  update(progress: BackfillProgress): void
  stop(progress: BackfillProgress): void
}

/** The backfill's progress display on `stream`, from its first progress `initial` (rates count from it). */
export function createProgressView(stream: NodeJS.WriteStream, initial: BackfillProgress): ProgressView {
  const startedAt = Date.now()
  const figures = (p: BackfillProgress) =>
    backfillRate(Math.max(0, p.computed - initial.computed), Date.now() - startedAt, p.total - p.computed)
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: 'backfill [{bar}] {value}/{total} days | {rate} days/s | ETA {eta_text}',
        stream,
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    )
    const first = figures(initial)
    bar.start(initial.total, initial.computed, { rate: first.rate, eta_text: first.eta })
    return {
      update(p) {
        const f = figures(p)
        bar.update(p.computed, { rate: f.rate, eta_text: f.eta })
      },
      stop(p) {
        this.update(p)
        bar.stop()
      },
    }
  }
  let lastLine = 0
  const write = (p: BackfillProgress) => {
    const f = figures(p)
    stream.write(`backfill ${p.computed}/${p.total} days computed (${f.rate} days/s, ETA ${f.eta})\n`)
    lastLine = Date.now()
  }
  write(initial)
  return {
    update(p) {
      if (Date.now() - lastLine >= LINE_MS) write(p)
    },
    stop(p) {
      write(p)
    },
  }
}

/** A day of the backfill failed for good: the command stops with it. */
export class BackfillFailedError extends LsReportError {
  override name = 'BackfillFailedError'
}

/** What a backfill says of a failed day (`beforeRange`: a day before the range that the range waits for). */
export function failureMessage(day: FailedDay, beforeRange: boolean): string {
  const message = `day ${day.date} (report epoch ${day.report_epoch}) failed: ${day.error}`
  return beforeRange ? `${message} (the range waits for it: days are computed in chain order)` : message
}

/**
 * `lsreport backfill --from D --to D [--recompute [--reason R]]`: prepares the range (`startBackfill`), runs the day jobs
 * in this process until every day of the range is computed (inline runner; with REDIS_URL a BullMQ worker
 * that cooperates with any running `lsreport worker`), showing progress on stderr. Prints a JSON summary and
 * returns 0 when done; throws `BackfillFailedError` when a day fails; returns 130 on SIGINT/SIGTERM after
 * the job in flight finished (the state is in the database: the same command resumes).
 */
export async function backfillCommand(
  ctx: Context,
  opts: DateRange & { recompute?: boolean; reason?: RecomputeReason },
): Promise<number> {
  const range = validateRange(opts)
  let interrupted = false
  let wake = () => {}
  const onSignal = () => {
    interrupted = true
    wake()
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    const startedAt = Date.now()
    const { db } = ctx.dbh
    const chain = await chainOf(ctx.config)
    const chainId = chain.chainId
    const start = await startBackfill(db, chainId, {
      ...range,
      recompute: opts.recompute === true,
      ...(opts.reason ? { reason: opts.reason } : {}),
    })
    ctx.logger.info(
      { chain_id: chainId, ...range, days: start.days, retried: start.retried, recomputed: start.recomputed },
      'backfill started',
    )
    const jobs = createJobs({
      db,
      logger: ctx.logger,
      chain,
      confirmations: ctx.config.confirmations,
      shardWallets: ctx.config.dayShardWallets,
    })
    const schedule = jobs.processors[DAY_JOBS.schedule]
    if (!schedule) throw new Error('the day scheduler is not registered')
    const runner = buildRunner(
      ctx,
      {
        ...jobs.processors,
        [DAY_JOBS.schedule]: boundedScheduler(schedule, db, chainId, range.to),
      },
      jobs.inlineConcurrency,
    )
    jobs.useRunner(runner)
    let closing: Promise<void> | undefined
    const closeRunner = () => {
      closing ??= runner.close()
      return closing
    }
    ctx.shutdown.add('jobs', closeRunner)
    const progress = () => backfillProgress(db, chainId, range)

    let current = await progress()
    const view = createProgressView(process.stderr, current)
    if (!interrupted) await runner.start()
    let lastKick = 0
    while (!interrupted) {
      const failed = current.failed[0] ?? current.blockedBy
      if (failed) {
        view.stop(current)
        await closeRunner()
        throw new BackfillFailedError(failureMessage(failed, failed === current.blockedBy))
      }
      if (current.computed === current.total) break
      if (Date.now() - lastKick >= KICK_MS) {
        // nudge the scheduler (the day jobs also start the next day as soon as one is computed)
        const second = Math.floor(Date.now() / 1000)
        await runner.enqueue(DAY_JOBS.schedule, {}, { jobId: `days-backfill-${second}`, attempts: 1 })
        lastKick = Date.now()
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS)
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      current = await progress()
      view.update(current)
    }
    view.stop(current)
    await closeRunner()
    if (interrupted) {
      const after = await progress()
      const hint = opts.recompute ? ' (without --recompute to keep the days recomputed so far)' : ''
      process.stderr.write(
        `backfill interrupted: ${after.computed}/${after.total} days computed; run the same command again to resume${hint}\n`,
      )
      return EXIT_INTERRUPTED
    }
    process.stdout.write(
      `${JSON.stringify({
        from: range.from,
        to: range.to,
        days: current.total,
        computed: current.computed,
        duration_ms: Date.now() - startedAt,
      })}\n`,
    )
    return 0
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}
