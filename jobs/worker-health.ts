import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createGuessBudget, metricsTokenCheck, type WorkerMetrics } from '../metrics/index.ts'
import type { JobInFlight, JobWatch } from './job-watch.ts'

/** A job in flight as /health shows it. */
interface JobView {
  id: string
  name: string
  started_at: string
  running_ms: number
  idle_ms: number
  stuck: boolean
}

/** The body of a worker's GET /health: `ok`, or `stuck` with a message naming the stuck jobs. */
export interface WorkerHealth {
  status: 'ok' | 'stuck'
  message?: string
  /** The jobs in flight, the longest without progress first. */
  jobs: JobView[]
}

const view = (job: JobInFlight): JobView => ({
  id: job.id,
  name: job.name,
  started_at: new Date(job.startedAt).toISOString(),
  running_ms: job.runningMs,
  idle_ms: job.idleMs,
  stuck: job.stuck,
})

/**
 * A worker's health now: 200 `ok` while no job in flight went `stuckAfterMs` without progress, else 503
 * `stuck`, the message naming each stuck job (name, id, how long without progress).
 *
 * @example
 * workerHealth(watch) // { http: 503, body: { status: 'stuck', message: 'job sync (id repeat:every-sync:1) made no progress for 2.1 s (WORKER_STUCK_AFTER_MS 1000)', jobs: [...] } }
 */
export function workerHealth(watch: JobWatch): { http: 200 | 503; body: WorkerHealth } {
  const jobs = watch.inFlight()
  const stuck = jobs.filter((job) => job.stuck)
  if (stuck.length === 0) return { http: 200, body: { status: 'ok', jobs: jobs.map(view) } }
  const named = stuck
    .map((job) => `job ${job.name} (id ${job.id}) made no progress for ${(job.idleMs / 1000).toFixed(1)} s`)
    .join('; ')
  return {
    http: 503,
    body: {
      status: 'stuck',
      message: `${named} (WORKER_STUCK_AFTER_MS ${watch.stuckAfterMs})`,
      jobs: jobs.map(view),
    },
  }
}

/** The worker's HTTP port: where it listens, and its close. */
export interface WorkerHealthServer {
  url: string
  close(): Promise<void>
}

/**
 * Serves a worker's `GET /health` (`workerHealth`: 200, or 503 naming a stuck job) and `GET /metrics` (its
 * registry, Prometheus text; with `metricsToken`, a scrape must send `Authorization: Bearer <token>` as on the
 * API, refused scrapes budgeted per address like the API's: `guesses`, then 429) on plain node:http: no framework,
 * nothing of api/. Anything else is 404; errors answer the API's `{message, status}` body with its catalog code
 * (`IR1004`, `IR1005`, `IR2000`, `IR2001`, `IR5000`).
 *
 * @example
 * const server = await serveWorkerHealth({ host: '0.0.0.0', port: 9464, watch, metrics, metricsToken: undefined })
 * // curl http://worker:9464/health -> {"status":"ok","jobs":[]}
 */
export async function serveWorkerHealth(options: {
  host: string
  port: number
  watch: JobWatch
  metrics: WorkerMetrics
  metricsToken: string | undefined
  /** Refused scrapes an address may make per window before 429 (default: the API's 600 a minute). */
  guesses?: { max: number; windowMs: number }
}): Promise<WorkerHealthServer> {
  const authorized = metricsTokenCheck(options.metricsToken)
  const budget = createGuessBudget(options.guesses ?? { max: 600, windowMs: 60_000 })
  const send = (res: http.ServerResponse, status: number, type: string, body: string, head: boolean) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' })
    res.end(head ? undefined : body)
  }
  const json = (res: http.ServerResponse, status: number, body: unknown, head: boolean) =>
    send(res, status, 'application/json; charset=utf-8', JSON.stringify(body), head)
  const server = http.createServer((req, res) => {
    const head = req.method === 'HEAD'
    const route = (req.url ?? '/').split('?')[0]
    if ((req.method === 'GET' || head) && route === '/health') {
      const health = workerHealth(options.watch)
      return json(res, health.http, health.body, head)
    }
    if ((req.method === 'GET' || head) && route === '/metrics') {
      const address = req.socket.remoteAddress ?? ''
      const wait = budget.overFor(address)
      if (wait !== undefined) {
        res.setHeader('retry-after', String(wait))
        return json(
          res,
          429,
          { message: 'too many refused scrapes: try again later', status: 'IR1005' },
          head,
        )
      }
      const check = authorized(req.headers.authorization)
      if (check !== 'ok') budget.refused(address)
      if (check === 'missing')
        return json(
          res,
          401,
          { message: 'missing bearer token: send Authorization: Bearer <METRICS_TOKEN>', status: 'IR2000' },
          head,
        )
      if (check === 'invalid')
        return json(res, 401, { message: 'invalid metrics token', status: 'IR2001' }, head)
      options.metrics.scrape().then(
        (text) => send(res, 200, options.metrics.registry.contentType, text, head),
        () => json(res, 500, { message: 'metrics scrape failed', status: 'IR5000' }, head),
      )
      return
    }
    json(res, 404, { message: `route ${req.method} ${route} not found`, status: 'IR1004' }, head)
  })
  // a health probe is one short request: a slow client is cut
  server.requestTimeout = 10_000
  server.headersTimeout = 5_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const host = options.host.includes(':') ? `[${options.host}]` : options.host
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
