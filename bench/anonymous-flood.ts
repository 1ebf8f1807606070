/**
 * Benchmark: what an anonymous caller's worst bodies cost the API (issue 36). Each public route that takes a
 * body is flooded by BENCH_CLIENTS (4) clients, each in a process of its own (bench/flood-client.ts, one
 * keep-alive connection, as fast as the answers come), with its worst 1 MiB body, for BENCH_SECONDS (5), while
 * one more process probes `GET /health` every 20 ms; the same flood then runs against a bare Fastify route in
 * this process that reads each body whole as text and answers 400 (the machine's own limit for taking such
 * bodies, run side by side, as the other benchmarks set their routes against a bare one). Reported per case:
 * bodies answered per second and `x bare`, this process's CPU per body, `/health` p50/p99 under the flood of
 * the app and under the flood of the bare route, and RSS before and at most during the app's flood.
 *
 * - server: the real app (`buildApp`, the service's V8 flags, logging nothing) over a scratch database next to
 *   DATABASE_URL (BENCH_DB=pglite: PGlite in memory), with a rate limit no run reaches, so every body is read
 *   and refused by what it contains, not by the limit;
 * - bodies: nested arrays (refused at their 33rd byte), 38 objects of 256 members with 96-character keys (the
 *   costliest shape the pre-scan lets through to `JSON.parse`: 9,766 values, objects of at most 256
 *   members), a 1 MiB string field, a form of 1 MiB of fields (refused past 64 fields before its parse), and
 *   the nested body to an unmatched URL and, without a token, to a reporting route.
 *
 * Prints a table and writes bench/results/anonymous-flood.json.
 *
 *   npm run bench:flood
 *   BENCH_SECONDS=15 BENCH_CLIENTS=4 BENCH_CASES=token-nested,token-keys npm run bench:flood
 */
import { fork } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Fastify from 'fastify'
import { buildApp } from '../api/app.ts'
import { openSigningKeys } from '../api/auth/signing-keys.ts'
import { loadConfig } from '../common/config.ts'
import { createLogger } from '../common/logger.ts'
import { UNREACHED_RATE_LIMIT } from './load-client.ts'
import { describeMachine, machineFacts } from './machine.ts'
import { openScratchDb } from './scratch-db.ts'
import { applyServiceV8Flags } from './v8-flags.ts'

const v8Flags = applyServiceV8Flags()
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const clients = Number(process.env.BENCH_CLIENTS ?? 4)
const onlyCases = process.env.BENCH_CASES?.split(',').filter(Boolean)
const databaseUrl =
  process.env.BENCH_DB === 'pglite'
    ? undefined
    : (process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres')
const log = (line: string) => process.stderr.write(`${line}\n`)
const MIB = 1024 * 1024

/** The worst body of each public route (and of anonymous requests to the others), 1 MiB or just under. */
const CASES: { name: string; url: string; type: string; body: string }[] = [
  {
    name: 'token-nested',
    url: '/oauth/token',
    type: 'application/json',
    body: `${'['.repeat(MIB / 2)}${']'.repeat(MIB / 2)}`,
  },
  {
    name: 'token-keys',
    url: '/oauth/token',
    type: 'application/json',
    // 38 objects of 256 members with 96-character keys: 9,766 values, the most the pre-scan lets through
    body: `{${Array.from(
      { length: 38 },
      (_, o) =>
        `"o${o}":{${Array.from({ length: 256 }, (_, i) => `"${String(i).padStart(96, 'k')}":0`).join(',')}}`,
    ).join(',')}}`,
  },
  {
    name: 'token-string',
    url: '/oauth/token',
    type: 'application/json',
    body: JSON.stringify({ client_secret: 's'.repeat(MIB - 100) }),
  },
  {
    name: 'token-form',
    url: '/oauth/token',
    type: 'application/x-www-form-urlencoded',
    body: Array.from({ length: 100_000 }, (_, i) => `f${i}=`)
      .join('&')
      .slice(0, MIB),
  },
  {
    name: 'unmatched-nested',
    url: '/no-such-route',
    type: 'application/json',
    body: `${'['.repeat(MIB / 2)}${']'.repeat(MIB / 2)}`,
  },
  {
    name: 'report-no-token',
    url: '/eth/v1/rewards/wallets',
    type: 'application/json',
    body: `${'['.repeat(MIB / 2)}${']'.repeat(MIB / 2)}`,
  },
]

interface ClientResult {
  codes: Record<string, number>
  ms: number[]
  cpu_seconds: number
}

/** A flood-client process, ready for its end time. */
async function startClient(job: object): Promise<(until: number) => Promise<ClientResult>> {
  const child = fork(path.join(import.meta.dirname, 'flood-client.ts'), [], { execArgv: ['--import', 'tsx'] })
  const messages: unknown[] = []
  let wake = () => {}
  child.on('message', (m) => {
    messages.push(m)
    wake()
  })
  const next = () =>
    new Promise<unknown>((resolve) => {
      const check = () => {
        if (messages.length > 0) return resolve(messages.shift())
        wake = check
      }
      check()
    })
  child.send(job)
  await next()
  return async (until) => {
    child.send({ until })
    return (await next()) as ClientResult
  }
}

const percentile = (ms: number[], p: number) => {
  const sorted = [...ms].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN
}

/** One flood of `base + url` with `body` by `clients` processes while /health of the app is probed. */
async function flood(base: string, c: (typeof CASES)[number], probeBase: string) {
  const headers = { 'content-type': c.type }
  const runs = await Promise.all([
    startClient({ mode: 'probe', base: probeBase, url: '/health' }),
    ...Array.from({ length: clients }, () =>
      startClient({ mode: 'flood', base, url: c.url, headers, body: c.body }),
    ),
  ])
  global.gc?.()
  const rssBefore = process.memoryUsage().rss
  let rssMax = rssBefore
  const sampler = setInterval(() => {
    rssMax = Math.max(rssMax, process.memoryUsage().rss)
  }, 50)
  const cpuAtStart = process.cpuUsage()
  const started = performance.now()
  const until = Date.now() + seconds * 1000
  const [probe, ...floods] = await Promise.all(runs.map((run) => run(until)))
  const elapsed = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuAtStart)
  clearInterval(sampler)
  const codes: Record<string, number> = {}
  for (const f of floods)
    for (const [code, n] of Object.entries(f.codes)) codes[code] = (codes[code] ?? 0) + n
  const bodies = Object.values(codes).reduce((a, b) => a + b, 0)
  return {
    bodies_per_second: Number((bodies / elapsed).toFixed(1)),
    statuses: Object.entries(codes)
      .map(([code, n]) => `${code}:${n}`)
      .join(' '),
    server_cpu_ms_per_body: Number(((cpu.user + cpu.system) / 1000 / Math.max(1, bodies)).toFixed(2)),
    health_p50_ms: Number(percentile(probe?.ms ?? [], 0.5).toFixed(1)),
    health_p99_ms: Number(percentile(probe?.ms ?? [], 0.99).toFixed(1)),
    health_probes: probe?.ms.length ?? 0,
    rss_before_mb: Math.round(rssBefore / 2 ** 20),
    rss_growth_mb: Number(((rssMax - rssBefore) / 2 ** 20).toFixed(1)),
    load_generator_cpu_s: Number(floods.reduce((n, f) => n + f.cpu_seconds, 0).toFixed(2)),
  }
}

const machine = machineFacts()
log(describeMachine(machine))

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-bench-flood-'))
const dbh = await openScratchDb(databaseUrl, 4)
const port = 19_000 + Math.floor(Math.random() * 1000)
const config = loadConfig({
  DATA_DIR: dataDir,
  PORT: String(port),
  LOG_LEVEL: 'silent',
  ...UNREACHED_RATE_LIMIT,
})
const logger = createLogger({ level: 'silent' })
const signingKeys = await openSigningKeys({ db: dbh.db, config, logger })
const app = await buildApp({ config, logger, db: dbh.db, signingKeys })
const appBase = await app.listen({ host: '127.0.0.1', port })

// the bare route: Fastify reading every body whole as text, as the app's JSON parser does, and answering 400
const bare = Fastify()
bare.removeAllContentTypeParsers()
bare.addContentTypeParser('*', { parseAs: 'string', bodyLimit: MIB }, (_request, body, done) =>
  done(null, String(body).length),
)
bare.post('/*', async (_request, reply) => reply.code(400).send({ message: 'refused', status: 'IR1000' }))
const bareBase = await bare.listen({ host: '127.0.0.1', port: port + 1 })

const results: Record<string, unknown>[] = []
for (const c of CASES.filter((c) => !onlyCases || onlyCases.includes(c.name))) {
  const bareRun = await flood(bareBase, c, appBase)
  const appRun = await flood(appBase, c, appBase)
  const row = {
    case: c.name,
    url: c.url,
    body_bytes: Buffer.byteLength(c.body),
    ...appRun,
    x_bare: Number((appRun.bodies_per_second / bareRun.bodies_per_second).toFixed(2)),
    bare: bareRun,
  }
  results.push(row)
  log(
    `${c.name.padEnd(17)} ${appRun.statuses.padEnd(10)} ${String(appRun.bodies_per_second).padStart(6)} bodies/s ` +
      `(x bare ${row.x_bare}), ${appRun.server_cpu_ms_per_body} ms CPU each (bare ${bareRun.server_cpu_ms_per_body}); ` +
      `/health p50 ${appRun.health_p50_ms} p99 ${appRun.health_p99_ms} ms (bare flood: p99 ${bareRun.health_p99_ms}); ` +
      `RSS ${appRun.rss_before_mb} MB +${appRun.rss_growth_mb} MB`,
  )
}
await app.close()
await bare.close()
await dbh.close()
fs.rmSync(dataDir, { recursive: true, force: true })

const out = path.join(import.meta.dirname, 'results')
fs.mkdirSync(out, { recursive: true })
const file = path.join(out, 'anonymous-flood.json')
fs.writeFileSync(
  file,
  `${JSON.stringify({ at: new Date().toISOString(), machine, v8_flags: v8Flags, seconds, clients, results }, null, 2)}\n`,
)
log(`written: ${file}`)
process.exit(0)
