import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, test } from 'vitest'
import { FOLLOWER_LOCK_KEY } from '../jobs/follower/index.ts'
import { cli, deploymentEnv, spawnCli } from './helpers/cli.ts'
import { freePort } from './helpers/free-port.ts'
import { createTestDatabase, postgresAvailable, REDIS_URL, redisAvailable } from './helpers/services.ts'

const ready = (await postgresAvailable()) && (await redisAvailable())
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

/** Polls `check` every 200 ms until it answers true, or fails after `timeoutMs` with `why()`. */
async function until(check: () => Promise<boolean>, why: () => string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(why())
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe('lsreport worker: /health and /metrics on WORKER_PORT', () => {
  test.runIf(ready)(
    'behavior: /health is 200 while the jobs progress, /metrics answers Prometheus text, and a sync held on the follower lock turns /health 503 naming it until it moves again',
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-worker-health-'))
      cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
      const devnetFile = path.join(dataDir, 'devnet.json')
      const devnet = await spawnCli(
        ['devnet', '--days', '2', '--wallets', '10', '--day-interval', '0'],
        { DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
        async () => (await fs.stat(devnetFile).catch(() => undefined)) !== undefined,
      )
      cleanups.push(devnet.stop)
      const info = JSON.parse(await fs.readFile(devnetFile, 'utf8')) as { rpc_url: string; chain_id: number }
      const database = await createTestDatabase()
      cleanups.push(database.drop)
      const port = await freePort()
      const base = `http://127.0.0.1:${port}`
      const metricsToken = randomBytes(16).toString('hex')
      const env = deploymentEnv(
        { dataDir, databaseUrl: database.url, redisUrl: REDIS_URL, rpcUrl: info.rpc_url },
        {
          WORKER_PORT: String(port),
          WORKER_STUCK_AFTER_MS: '1000',
          METRICS_TOKEN: metricsToken,
          RATE_LIMIT_MAX: '20',
        },
      )
      await cli(['migrate'], env)
      const worker = await spawnCli(['worker'], env, async () => (await fetch(`${base}/health`)).ok)
      cleanups.push(worker.stop)
      const scrape = () => fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })
      const health = async () => {
        const res = await fetch(`${base}/health`)
        return {
          status: res.status,
          body: (await res.json()) as {
            status: string
            message?: string
            jobs: { name: string; stuck: boolean }[]
          },
        }
      }

      /** Polls /health until it answers `status`: its last answer. */
      const healthBecomes = async (status: number) => {
        const deadline = Date.now() + 30_000
        for (;;) {
          const answer = await health()
          if (answer.status === status) return answer
          if (Date.now() > deadline)
            throw new Error(
              `/health stayed ${answer.status}: ${JSON.stringify(answer.body)}\n${worker.output()}`,
            )
          await new Promise((r) => setTimeout(r, 200))
        }
      }

      // the follower ran (its durations are this worker's metrics) and nothing is stuck
      await until(
        async () =>
          /lsreport_job_duration_seconds_count\{job="sync",outcome="succeeded"\} [1-9]/.test(
            await (await scrape()).text(),
          ),
        () => `no sync ran\n${worker.output()}`,
      )
      expect(await health()).toMatchObject({ status: 200, body: { status: 'ok' } })
      const metrics = await scrape()
      expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/)
      const text = await metrics.text()
      expect(text).toContain('# TYPE lsreport_worker_jobs_in_flight gauge')
      expect(text).toMatch(/^lsreport_worker_stuck_jobs 0$/m)
      expect(text).toContain('lsreport_process_cpu_seconds_total')
      // a scrape without the token, and a path the worker does not serve, get the API's error bodies
      const anonymous = await fetch(`${base}/metrics`)
      expect({ status: anonymous.status, body: await anonymous.json() }).toEqual({
        status: 401,
        body: {
          message: 'missing bearer token: send Authorization: Bearer <METRICS_TOKEN>',
          status: 'IR2000',
        },
      })
      const missing = await fetch(`${base}/nope`)
      expect({ status: missing.status, body: await missing.json() }).toEqual({
        status: 404,
        body: { message: 'route GET /nope not found', status: 'IR1004' },
      })

      // hold the follower's lock (as a hung follower elsewhere would): the next sync waits on it, making no progress
      const lock = new pg.Client({ connectionString: database.url })
      await lock.connect()
      cleanups.push(() => lock.end())
      await lock.query('select pg_advisory_lock($1, $2)', [FOLLOWER_LOCK_KEY, info.chain_id])
      let last = await healthBecomes(503)
      expect(last.body.status).toBe('stuck')
      expect(last.body.message).toMatch(
        /^job sync \(id \S+\) made no progress for \d+\.\d s \(WORKER_STUCK_AFTER_MS 1000\)$/,
      )
      expect(last.body.jobs.find((job) => job.stuck)?.name).toBe('sync')
      expect(await (await scrape()).text()).toMatch(/^lsreport_worker_stuck_jobs 1$/m)

      // the lock released, the sync completes and the worker is healthy again
      await lock.query('select pg_advisory_unlock($1, $2)', [FOLLOWER_LOCK_KEY, info.chain_id])
      last = await healthBecomes(200)
      expect(last.body.status).toBe('ok')

      // METRICS_TOKEN guesses are budgeted per address as on the API (RATE_LIMIT_MAX refusals a window: the
      // anonymous scrape above and 19 wrong tokens), then 429 with Retry-After, the right token included
      const wrong = () => fetch(`${base}/metrics`, { headers: { authorization: 'Bearer guess' } })
      const guesses: number[] = []
      for (let i = 0; i < 19; i++) guesses.push((await wrong()).status)
      expect(guesses.every((status) => status === 401)).toBe(true)
      const over = await wrong()
      expect(over.status).toBe(429)
      expect(over.headers.get('retry-after')).toMatch(/^\d+$/)
      expect(await over.json()).toEqual({
        message: 'too many refused scrapes: try again later',
        status: 'IR1005',
      })
      expect((await scrape()).status).toBe(429)
    },
  )
})
