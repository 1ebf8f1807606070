import type { RecomputeReason } from '../db/repos/days.ts'
import type { DateRange, FailedDay } from '../jobs/days/backfill.ts'
import { BackfillFailedError, createProgressView, EXIT_INTERRUPTED, failureMessage } from './days.ts'
import type { OperatorClient } from './operator-client.ts'
import { callService } from './service-call.ts'

/**
 * `lsreport backfill` through a running `lsreport up` on the embedded database (PGlite allows one process per
 * data directory): the range goes to the service's `POST /v1/admin/backfill` with the operator client `up`
 * keeps in the data directory, and the service's own day jobs compute it while this command shows their
 * progress (`GET /v1/admin/days`). The same output and exit codes as a local backfill; an interrupt stops
 * only the watching (the service goes on computing the range).
 */

const POLL_MS = 500

interface AdminDay {
  date: string
  report_epoch: number
  status: 'computed' | 'pending' | 'computing' | 'failed'
  error: string | null
}

/** The range's days, as the local backfill's progress counts them (a day computed in the range is done). */
function progressOf(days: readonly AdminDay[]) {
  const failed: FailedDay[] = days
    .filter((d) => d.status === 'failed')
    .map((d) => ({ date: d.date, report_epoch: String(d.report_epoch), error: d.error ?? 'unknown error' }))
  return {
    total: days.length,
    computed: days.filter((d) => d.status === 'computed').length,
    pending: days.filter((d) => d.status === 'pending').length,
    computing: days.filter((d) => d.status === 'computing').length,
    failed,
  }
}

/**
 * Backfills (or recomputes) `opts`' range in the running service of `client`, waits until each of its days
 * is computed, prints the JSON summary and returns 0; throws `BackfillFailedError` when a day fails; 130 on
 * SIGINT/SIGTERM (the service keeps computing).
 */
export async function remoteBackfill(
  client: OperatorClient,
  opts: DateRange & { recompute?: boolean; reason?: RecomputeReason },
): Promise<number> {
  const startedAt = Date.now()
  const { access_token: token } = await callService<{ access_token: string }>(
    'POST',
    client.token_url,
    undefined,
    {
      grant_type: 'client_credentials',
      audience: client.audience,
      client_id: client.client_id,
      client_secret: client.client_secret,
    },
  )
  const started = await callService<{ chain_id: number; days: number }>(
    'POST',
    `${client.audience}/v1/admin/backfill`,
    token,
    {
      from: opts.from,
      to: opts.to,
      ...(opts.recompute ? { recompute: true } : {}),
      ...(opts.reason ? { reason: opts.reason } : {}),
    },
  )
  process.stderr.write(
    `backfill: ${started.days} day(s) sent to the running service at ${client.audience} (it holds the embedded database)\n`,
  )
  let interrupted = false
  const onSignal = () => {
    interrupted = true
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    const daysUrl = `${client.audience}/v1/admin/days?chain_id=${started.chain_id}&from=${opts.from}&to=${opts.to}`
    let current = progressOf(await callService<AdminDay[]>('GET', daysUrl, token))
    const view = createProgressView(process.stderr, current)
    while (!interrupted && current.computed < current.total) {
      const failed = current.failed[0]
      if (failed) {
        view.stop(current)
        throw new BackfillFailedError(failureMessage(failed, false))
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
      current = progressOf(await callService<AdminDay[]>('GET', daysUrl, token))
      view.update(current)
    }
    view.stop(current)
    if (interrupted) {
      process.stderr.write(
        `backfill: stopped watching at ${current.computed}/${current.total} days computed; the service goes on with the range\n`,
      )
      return EXIT_INTERRUPTED
    }
    const summary = { from: opts.from, to: opts.to, days: current.total, computed: current.computed }
    process.stdout.write(`${JSON.stringify({ ...summary, duration_ms: Date.now() - startedAt })}\n`)
    return 0
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}
