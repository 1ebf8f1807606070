/**
 * Benchmark: API latency and throughput on a computed 100k-wallet day, side by side in the same run with a
 * bare Fastify route returning a constant (the framework's limit on this machine).
 *
 * - data: a synthetic history of BENCH_HOLDERS (100,000) holders written straight into a scratch database
 *   (test/helpers/synthetic-history.ts) and its days computed by the real day pipeline
 *   (test/helpers/rewards-day.ts);
 * - server: the real app (`buildApp`, Postgres pool of 10) in this process, listening on 127.0.0.1, logging
 *   nothing; a second one on the same database at the service's default level (info, lines to a file)
 *   for the logged case;
 * - load: autocannon in a process of its own (bench/load.ts); requests cycle through 1,000 different addresses
 *   (half of them the reading org's wallets);
 * - rounds: each case runs BENCH_ROUNDS (3) rounds. In a round the case alternates with the routes it is
 *   set against, in slices of BENCH_SLICE_SECONDS (0.25) each, BENCH_SECONDS (10) of each route in all, in
 *   the order forward then backward (bare, case, case, bare, ...: a drift that is linear over the round
 *   weighs on every route alike), after a warm-up of BENCH_WARMUP (2) s of each: the machine's speed drifts
 *   by tens of percent within minutes when other work shares it, and two runs of 5 s back to back measured
 *   that drift as much as the routes (the logged read at 0.70-1.17 x unlogged); rounds of 10 slices of 0.5 s
 *   still did (0.68-1.34 on a quiet machine), rounds of 40 slices of 0.25 s did not (0.87-0.91, the same
 *   machine and load: bench/README.md). A route's figures in a round
 *   are its slices' requests over their summed time, their costs summed, latency from their merged
 *   histograms. Every case is set against the bare route (`ratio_to_bare`); the 1-address read and the
 *   routes below against the bare route with the read's request and answer shape too (`ratio_to_shape`,
 *   with that route's own figures beside it); the logged read against the same read on the same app with
 *   its level set to silent for its slices (`ratio_to_unlogged`, and `server_cpu_ratio_to_unlogged`: what
 *   the access log costs, apart from the second app instance's own speed). A case's figures are those of
 *   its median round, with the range of its rounds' ratios;
 * - where the time goes: two routes of the same app, registered by this benchmark, answer the 1-address
 *   read's bytes and headers and do nothing else (`app-shape`: no token; `app-shape-token`: the reporting
 *   routes' bearer check): against the bare shape they price the app's per-request machinery and the token
 *   check apart from the read's own work; and the bare shape plus BENCH_WORK_US (6) µs of a busy loop
 *   (`bare-shape-work`) shows what a route's own microseconds cost in req/s on this machine;
 * - costs per request (server CPU, Postgres CPU, queries, load generator CPU) are taken over the measured
 *   slices alone (between slices no load runs);
 * - token verification: the cost of one ES256 verification (jose) and of the verified-token cache, measured
 *   apart (in this process, with no load running).
 *
 * Prints a table and writes bench/results/api.json.
 *
 *   npm run bench:api                         (DATABASE_URL: the server to create the scratch database on)
 *   BENCH_DB=pglite npm run bench:api         (PGlite in memory: the embedded mode)
 *   BENCH_SECONDS=10 BENCH_SLICE_SECONDS=0.25 BENCH_ROUNDS=3 BENCH_CONNECTIONS=10 BENCH_HOLDERS=100000 BENCH_CASES=single,bulk npm run bench:api
 *   BENCH_WORK_US=12 BENCH_CASES=bare-shape-work npm run bench:api
 *   BENCH_CPU_PROF=/tmp/prof npm run bench:api (a V8 CPU profile of the server per route, over its slices of the
 *   last round)
 *   BENCH_HEAP_PROF=/tmp/heap npm run bench:api (per case, a sampled heap profile of the objects that survived a
 *   young-generation GC: what a request keeps alive after it is answered; with BENCH_HEAP_PROF_ALL=1 every
 *   allocation sampled: what a request allocates)
 *   BENCH_V8_DEFAULTS=1 npm run bench:api  (V8's defaults instead of the service's flags, common/v8-flags.ts)
 */
import fs from 'node:fs'
import { Session } from 'node:inspector/promises'
import os from 'node:os'
import path from 'node:path'
import Fastify from 'fastify'
import { buildApp } from '../api/app.ts'
import { openSigningKeys } from '../api/auth/signing-keys.ts'
import { createTokenVerifier, issueToken } from '../api/auth/tokens.ts'
import { loadConfig } from '../common/config.ts'
import { createLogger, flushLogger } from '../common/logger.ts'
import { seedRewardsDay } from '../test/helpers/rewards-day.ts'
import {
  type LoadResult,
  type LoadTarget,
  runSlices,
  type SliceResult,
  UNREACHED_RATE_LIMIT,
} from './load-client.ts'
import { describeMachine, machineFacts } from './machine.ts'
import { postgresBackendSeconds, postgresCpuSince } from './postgres-cpu.ts'
import { type CpuProfile, type HeapProfile, mergeCpuProfiles, mergeHeapProfiles } from './profiles.ts'
import { openScratchDb } from './scratch-db.ts'
import { applyServiceV8Flags } from './v8-flags.ts'

const v8Flags = applyServiceV8Flags()
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const sliceSeconds = Number(process.env.BENCH_SLICE_SECONDS ?? 0.25)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const warmup = Number(process.env.BENCH_WARMUP ?? 2)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10)
const holders = Number(process.env.BENCH_HOLDERS ?? 100_000)
const workUs = Number(process.env.BENCH_WORK_US ?? 6)
const onlyCases = process.env.BENCH_CASES?.split(',').filter(Boolean)
const profileDir = process.env.BENCH_CPU_PROF
const heapProfileDir = process.env.BENCH_HEAP_PROF
/** BENCH_HEAP_PROF_ALL=1: every allocation sampled, those a young-generation GC collected too. */
const heapProfileAll = process.env.BENCH_HEAP_PROF_ALL === '1'
const databaseUrl =
  process.env.BENCH_DB === 'pglite'
    ? undefined
    : (process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres')
const log = (line: string) => process.stderr.write(`${line}\n`)

const machine = machineFacts()
log(describeMachine(machine))

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-bench-api-'))
const dbh = await openScratchDb(databaseUrl, 10)
const database =
  dbh.backend === 'postgres' ? String((await dbh.db.raw('select current_database() as d')).rows[0]?.d) : ''
const postgres =
  dbh.backend === 'postgres'
    ? String((await dbh.db.raw('show server_version')).rows[0]?.server_version ?? '')
    : 'PGlite'
log(`backend: ${dbh.backend} (${postgres}); writing ${holders} holders and computing their days ...`)
const day = await seedRewardsDay(dbh.db, { holders })
log(
  `day ${day.date}: ${day.wallets} wallet records (history ${day.seconds.history.toFixed(1)} s, days ${day.seconds.days.toFixed(1)} s)`,
)

const port = 18_000 + Math.floor(Math.random() * 1000)
const base = `http://127.0.0.1:${port}`
const config = loadConfig({
  DATA_DIR: dataDir,
  PORT: String(port),
  LOG_LEVEL: 'silent',
  ...UNREACHED_RATE_LIMIT,
})
const signingKeys = await openSigningKeys({ db: dbh.db, config, logger: createLogger({ level: 'silent' }) })
const app = await buildApp({ config, logger: createLogger({ level: 'silent' }), db: dbh.db, signingKeys })
// the benchmark's two routes answering the 1-address read's bytes and headers (filled in once the read has
// answered, below) and doing nothing else: the app's per-request machinery, then the bearer check, apart
const readAnswer = { bytes: Buffer.alloc(0), headers: {} as Record<string, string> }
// (hidden: the benchmark's own routes are no part of the OpenAPI document)
app.post('/bench/shape', { schema: { hide: true } }, async (_request, reply) =>
  reply.headers(readAnswer.headers).send(readAnswer.bytes),
)
app.post(
  '/bench/shape-token',
  { schema: { hide: true }, onRequest: app.requireScope('read:eth-rewards') },
  async (_request, reply) => reply.headers(readAnswer.headers).send(readAnswer.bytes),
)
await app.listen({ host: '127.0.0.1', port })
// the same app at the service's default log level (info), its lines written to a file: what the access log
// costs (the token's audience is the first app's base URL, so one token serves both)
const loggedLogger = createLogger({ level: 'info', destination: path.join(dataDir, 'api.log') })
const loggedApp = await buildApp({
  config: loadConfig({
    DATA_DIR: dataDir,
    PORT: String(port + 1),
    BASE_URL: base,
    LOG_LEVEL: 'info',
    ...UNREACHED_RATE_LIMIT,
  }),
  logger: loggedLogger,
  db: dbh.db,
  signingKeys,
})
const loggedBase = await loggedApp.listen({ host: '127.0.0.1', port: port + 1 })

const tokenRes = await fetch(`${base}/oauth/token`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    grant_type: 'client_credentials',
    audience: base,
    client_id: day.clientId,
    client_secret: day.clientSecret,
  }),
})
const { access_token: token } = (await tokenRes.json()) as { access_token: string }
const auth = { authorization: `Bearer ${token}` }
const json = { ...auth, 'content-type': 'application/json' }

// token verification, measured apart: one ES256 verification (uncached) and the cache's lookup
const verifier = createTokenVerifier(signingKeys, { issuer: config.authUrl, audience: config.baseUrl })
const tokens = await Promise.all(
  Array.from({ length: 500 }, async () =>
    issueToken(await signingKeys.current(), {
      issuer: config.authUrl,
      audience: config.baseUrl,
      clientId: day.clientId,
      orgId: day.orgId,
      scopes: ['read:eth-rewards'],
    }),
  ),
)
for (const t of tokens.slice(0, 50)) await verifier(t)
let started = performance.now()
for (const t of tokens) await verifier(t)
const verifyUs = ((performance.now() - started) * 1000) / tokens.length
const cache = new Map(tokens.map((t) => [t, { exp: Date.now() / 1000 + 3600 }]))
started = performance.now()
let hits = 0
for (let i = 0; i < 1_000_000; i++) {
  const hit = cache.get(tokens[i % tokens.length] as string)
  if (hit && hit.exp * 1000 > Date.now()) hits++
}
const cachedUs = ((performance.now() - started) * 1000) / 1_000_000
const tokenVerification = {
  es256_verify_us: Number(verifyUs.toFixed(1)),
  cached_lookup_us: Number(cachedUs.toFixed(3)),
  note: 'api/auth caches verified tokens (expiry checked on every request): a request pays the lookup',
}
log(
  `token verification: ES256 verify ${tokenVerification.es256_verify_us} µs; cached lookup ${tokenVerification.cached_lookup_us} µs (${hits} hits)`,
)

const bare = Fastify()
bare.get('/constant', async () => ({ status: 'ok' }))
// the same framework with the single read's shape and nothing else: its JSON body in (parsed), as many
// bytes out as the read's answer, the same response headers: the machine's limit for that request shape
const sampleBody = JSON.stringify({ addresses: [day.addresses[0]], date: day.date })
const sample = await fetch(`${base}/eth/v1/rewards/wallets`, {
  method: 'POST',
  headers: json,
  body: sampleBody,
})
const sampleBytes = Buffer.from(await sample.arrayBuffer())
if (sample.status !== 200) throw new Error(`the 1-address read: ${sample.status} ${sampleBytes.toString()}`)
const sampleHeaders = Object.fromEntries(
  [...sample.headers].filter(
    ([name]) => !['content-length', 'date', 'connection', 'keep-alive'].includes(name),
  ),
)
bare.post('/shape', async (_request, reply) => reply.headers(sampleHeaders).send(sampleBytes))
// the same plus a fixed amount of work (a busy loop of BENCH_WORK_US): what any route's own microseconds
// cost in req/s on this machine, where an answer that finds the load generator asleep pays for waking it
bare.post('/shape-work', async (_request, reply) => {
  const until = performance.now() + workUs / 1000
  while (performance.now() < until) {}
  return reply.headers(sampleHeaders).send(sampleBytes)
})
readAnswer.bytes = sampleBytes
readAnswer.headers = sampleHeaders
const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 })

const own = day.ownAddresses
const to = day.date
const from = new Date(Date.parse(`${to}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10)
/** The 1-address read's bodies: each of the day's addresses in turn. */
const singleBodies = day.addresses.map((a) => JSON.stringify({ addresses: [a], date: day.date }))
/** The 1-address read's requests sent to `url`. */
const singleReads = (url: string): LoadTarget => ({
  url,
  method: 'POST',
  headers: json,
  bodies: singleBodies,
})
/** GETs of the app's `paths` (one per request, in turn) with the reading client's token. */
const tokenGets = (paths: string[]): LoadTarget => ({ url: `${base}/health`, headers: auth, paths })
/** A case: a route and its requests; `loggedLevel`: the logged app's level while it runs (default info). */
interface Case {
  key: string
  name: string
  target: LoadTarget
  loggedLevel?: 'silent'
}
const cases: Case[] = [
  {
    key: 'bare',
    name: 'bare Fastify: GET /constant',
    target: { url: `${bareUrl}/constant` },
  },
  {
    key: 'bare-shape',
    name: `bare Fastify: POST, the 1-address read's shape (${sampleBytes.length} B)`,
    target: singleReads(`${bareUrl}/shape`),
  },
  {
    key: 'bare-shape-work',
    name: `bare Fastify: the same plus ${workUs} µs of work (a busy loop)`,
    target: singleReads(`${bareUrl}/shape-work`),
  },
  {
    key: 'health',
    name: 'app: GET /health (no token, no database)',
    target: { url: `${base}/health` },
  },
  {
    key: 'app-shape',
    name: "app: a route answering the read's bytes, no token",
    target: singleReads(`${base}/bench/shape`),
  },
  {
    key: 'app-shape-token',
    name: "app: a route answering the read's bytes, token checked",
    target: singleReads(`${base}/bench/shape-token`),
  },
  {
    key: 'single',
    name: 'POST /eth/v1/rewards/wallets, 1 address',
    target: singleReads(`${base}/eth/v1/rewards/wallets`),
  },
  {
    key: 'single-logged',
    name: 'the same, LOG_LEVEL=info (lines to a file)',
    target: singleReads(`${loggedBase}/eth/v1/rewards/wallets`),
  },
  {
    key: 'summary',
    name: 'GET /eth/v1/rewards/wallets/{address}/summary (2 days)',
    target: tokenGets(day.addresses.map((a) => `/eth/v1/rewards/wallets/${a}/summary?from=${from}&to=${to}`)),
  },
  {
    key: 'bulk',
    name: 'POST /eth/v1/rewards/wallets, 1,000 addresses',
    target: {
      url: `${base}/eth/v1/rewards/wallets`,
      method: 'POST',
      headers: json,
      bodies: [JSON.stringify({ addresses: day.addresses, date: day.date })],
    },
  },
  {
    key: 'wallet',
    name: 'GET /v0/platform/wallets/{address}',
    target: tokenGets(own.map((a) => `/v0/platform/wallets/${a}`)),
  },
  {
    key: 'account',
    name: 'GET /v0/platform/accounts/{key} (100 wallets)',
    target: tokenGets([`/v0/platform/accounts/${day.accountKey}`]),
  },
]

// a response of each case, checked before measuring (a benchmark of errors measures nothing)
// the app's routes answering the read's bytes (above) answer them exactly
for (const route of ['/bench/shape', '/bench/shape-token']) {
  const res = await fetch(`${base}${route}`, { method: 'POST', headers: json, body: sampleBody })
  const bytes = Buffer.from(await res.arrayBuffer())
  if (res.status !== 200 || !bytes.equals(sampleBytes)) throw new Error(`${route}: ${res.status} ${bytes}`)
}
for (const c of cases.filter((c) => !/^(bare|app-)/.test(c.key) && c.key !== 'health')) {
  if (onlyCases && !onlyCases.includes(c.key)) continue
  const probe =
    c.key === 'single' || c.key === 'single-logged' || c.key === 'bulk'
      ? await fetch(`${c.key === 'single-logged' ? loggedBase : base}/eth/v1/rewards/wallets`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ addresses: c.key === 'bulk' ? day.addresses : own.slice(0, 1), date: to }),
        })
      : await fetch(
          `${base}${
            c.key === 'summary'
              ? `/eth/v1/rewards/wallets/${own[0]}/summary?from=${from}&to=${to}`
              : c.key === 'wallet'
                ? `/v0/platform/wallets/${own[0]}`
                : `/v0/platform/accounts/${day.accountKey}`
          }`,
          { headers: auth },
        )
  const body = await probe.text()
  if (probe.status !== 200) throw new Error(`${c.name}: ${probe.status} ${body.slice(0, 500)}`)
  if (c.key === 'bulk' && (JSON.parse(body) as unknown[]).length !== day.addresses.length) {
    throw new Error(`${c.name}: expected ${day.addresses.length} records`)
  }
  // (the logger writes in batches: flushed before the file is read)
  if (c.key === 'single-logged') await flushLogger(loggedLogger)
  if (
    c.key === 'single-logged' &&
    !fs.readFileSync(path.join(dataDir, 'api.log'), 'utf8').includes('request answered')
  ) {
    throw new Error(`${c.name}: no access-log line written`)
  }
}

// the reads' memory holds the day's records of the addresses before any round (one read of the 1,000 per app):
// filled by the warm-up alone, it filled at the rate the database answered the misses, and under other work's
// load (load average 6-8) 678 of the 1,000 queries fell in the first round's measured run
for (const url of [base, loggedBase]) {
  const res = await fetch(`${url}/eth/v1/rewards/wallets`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ addresses: day.addresses, date: day.date }),
  })
  if (res.status !== 200) throw new Error(`filling the reads' memory: ${res.status} ${await res.text()}`)
  await res.arrayBuffer()
}

const session = profileDir || heapProfileDir ? new Session() : undefined
if (session) {
  session.connect()
  if (profileDir) {
    fs.mkdirSync(profileDir, { recursive: true })
    await session.post('Profiler.enable')
  }
  if (heapProfileDir) {
    fs.mkdirSync(heapProfileDir, { recursive: true })
    await session.post('HeapProfiler.enable')
  }
}

/** The measured slices of each target in a round: BENCH_SECONDS in slices of BENCH_SLICE_SECONDS, an even count. */
const slicesPerTarget = 2 * Math.max(1, Math.round(seconds / sliceSeconds / 2))
log(
  `${rounds} rounds per case; in each, the case and the routes it is set against (the bare route, the shape route, the same app logging nothing) alternate in slices of ${sliceSeconds} s, ${slicesPerTarget} per route (after ${warmup} s of warm-up each), ${connections} connections`,
)
/** A run's costs per request, beside the load generator's figures. */
interface RunCosts {
  queries_per_request: number
  server_cpu_ms_per_request: number
  /** of which in the kernel (system time): the socket's reads and writes, mostly */
  server_system_cpu_ms_per_request: number
  postgres_cpu_ms_per_request: number
  load_generator_cpu_ms_per_request: number
  load_average: number[]
}
type Measured = LoadResult &
  RunCosts & {
    ratio_to_bare: number | null
    adjacent_bare_requests_per_second?: number
    /**
     * the cases with the 1-address read's request and answer (SHAPED_CASES): to the bare route with that
     * shape in the same round's alternating slices, whose own figures are beside it
     */
    ratio_to_shape?: number
    shape?: {
      requests_per_second: number
      server_cpu_ms_per_request: number
      server_system_cpu_ms_per_request: number
      ratio_to_bare: number | null
    }
    /**
     * the logged read: to the same app logging nothing, in slices alternating with its own in the same round
     * (requests per second, and server CPU per request: logged over unlogged), whose figures are beside it
     */
    ratio_to_unlogged?: number
    server_cpu_ratio_to_unlogged?: number
    unlogged?: { requests_per_second: number; server_cpu_ms_per_request: number }
  }
/** The cases set against the bare route with the 1-address read's shape in every round (`ratio_to_shape`). */
const SHAPED_CASES = new Set(['bare-shape-work', 'app-shape', 'app-shape-token', 'single'])

/**
 * The order of a round's measured slices over `targets` routes: forward then backward (0 1 2 2 1 0 ...),
 * `slicesPerTarget` of each, so a drift of the machine's speed that is linear over the round weighs on every
 * route alike.
 */
function sliceOrder(targets: number): number[] {
  const forward = Array.from({ length: targets }, (_, i) => i)
  const cycle = [...forward, ...forward.toReversed()]
  return Array.from({ length: slicesPerTarget / 2 }, () => cycle).flat()
}

/**
 * One round: the `targets` in alternating slices (`sliceOrder`), the logged app at each target's level; each
 * target's figures over its slices together, with its costs per request (queries, CPU of this process, of
 * Postgres, of the load generator) taken over its measured slices alone (between slices no load runs).
 */
async function measureRound(targets: Case[]): Promise<(LoadResult & RunCosts)[]> {
  const totals = targets.map(() => ({ user: 0, system: 0, postgres: 0, queries: 0 }))
  const cpuProfiles = targets.map((): CpuProfile[] => [])
  const heapProfiles = targets.map((): HeapProfile[] => [])
  let current: (typeof totals)[number] | undefined
  const countQuery = () => {
    if (current) current.queries += 1
  }
  dbh.db.on('query', countQuery)
  let cpu = process.cpuUsage()
  let pgCpu = new Map<string, number>()
  const loadBefore = os.loadavg()[0] as number
  let results: LoadResult[]
  try {
    results = await runSlices(
      {
        connections,
        targets: targets.map((t) => t.target),
        order: sliceOrder(targets.length),
        sliceSeconds,
        warmup,
      },
      {
        before: async (target, measured) => {
          loggedApp.log.level = targets[target]?.loggedLevel ?? 'info'
          if (!measured) return
          if (session && profileDir) await session.post('Profiler.start')
          // sampled: the objects that outlive a young-generation GC (promoted, even when a full GC collects
          // them later), which are what makes scavenges expensive
          if (session && heapProfileDir) {
            await session.post('HeapProfiler.startSampling', {
              samplingInterval: 1024,
              includeObjectsCollectedByMinorGC: heapProfileAll,
              includeObjectsCollectedByMajorGC: true,
            })
          }
          if (database) pgCpu = postgresBackendSeconds(database)
          current = totals[target]
          cpu = process.cpuUsage()
        },
        after: async (slice: SliceResult) => {
          const used = process.cpuUsage(cpu)
          current = undefined
          const total = totals[slice.target] as (typeof totals)[number]
          total.user += used.user
          total.system += used.system
          if (database) total.postgres += postgresCpuSince(database, pgCpu)
          if (session && profileDir) {
            cpuProfiles[slice.target]?.push((await session.post('Profiler.stop')).profile)
          }
          if (session && heapProfileDir) {
            heapProfiles[slice.target]?.push(
              (await session.post('HeapProfiler.stopSampling')).profile as unknown as HeapProfile,
            )
          }
        },
      },
    )
  } finally {
    dbh.db.off('query', countQuery)
    loggedApp.log.level = 'info'
  }
  const loadAfter = os.loadavg()[0] as number
  return targets.map((t, i) => {
    const result = results[i] as LoadResult
    const total = totals[i] as (typeof totals)[number]
    // a run with failed requests measured less than the case (an answer other than 2xx already refused the
    // run: bench/load-client.ts)
    if (result.errors > 0 || result.timeouts > 0) {
      throw new Error(
        `${t.name}: ${result.errors} connection errors, ${result.timeouts} timeouts: not measured`,
      )
    }
    if (profileDir && cpuProfiles[i]?.length) {
      const file = path.join(profileDir, `api-${t.key}.cpuprofile`)
      fs.writeFileSync(file, JSON.stringify(mergeCpuProfiles(cpuProfiles[i])))
    }
    if (heapProfileDir && heapProfiles[i]?.length) {
      const file = path.join(heapProfileDir, `api-${t.key}.heapprofile`)
      fs.writeFileSync(file, JSON.stringify(mergeHeapProfiles(heapProfiles[i])))
    }
    const perRequest = (cpuSeconds: number) =>
      Number(((cpuSeconds * 1000) / Math.max(1, result.requests)).toFixed(3))
    return {
      ...result,
      queries_per_request: Number((total.queries / Math.max(1, result.requests)).toFixed(2)),
      server_cpu_ms_per_request: perRequest((total.user + total.system) / 1e6),
      server_system_cpu_ms_per_request: perRequest(total.system / 1e6),
      postgres_cpu_ms_per_request: perRequest(total.postgres),
      load_generator_cpu_ms_per_request: perRequest(result.cpu_seconds),
      load_average: [Number(loadBefore.toFixed(2)), Number(loadAfter.toFixed(2))],
    }
  })
}

const rows: (Measured & { key: string; name: string; ratio_range: number[]; rounds: Measured[] })[] = []
const bareCase = cases[0] as Case
const shapeCase = cases[1] as Case
/**
 * The logged read with logging off: the same app instance (its caches, its place in V8's inline caches) at
 * level silent during its slices, so the difference is the access log alone.
 */
const unloggedCase: Case = {
  key: 'single-logged-off',
  name: 'the same app, logging off',
  target: singleReads(`${loggedBase}/eth/v1/rewards/wallets`),
  loggedLevel: 'silent',
}
/** `a` over `b`, to two places. */
const ratio = (a: number, b: number) => Number((a / b).toFixed(2))
for (const c of cases) {
  if (onlyCases && !onlyCases.includes(c.key) && c.key !== 'bare') continue
  // Rounds of the case alternating, in short slices, with the bare route (and, for the 1-address read's
  // shape, the bare route with that shape; for the logged read, the same app logging nothing): each ratio
  // is over the same stretch of the machine's time (its speed drifts by tens of percent within minutes when
  // other work shares it); the case's figures are those of its median round, with the range of the rounds'
  // ratios beside them.
  const others = [
    ...(c.key === 'bare' ? [] : [bareCase]),
    ...(SHAPED_CASES.has(c.key) ? [shapeCase] : []),
    ...(c.key === 'single-logged' ? [unloggedCase] : []),
  ]
  const measuredRounds: Measured[] = []
  for (let round = 0; round < rounds; round++) {
    const measured = await measureRound([...others, c])
    const run = measured.at(-1) as LoadResult & RunCosts
    const of = (other: Case) => measured[others.indexOf(other)]
    const bare = c.key === 'bare' ? undefined : of(bareCase)
    const shape = SHAPED_CASES.has(c.key) ? of(shapeCase) : undefined
    const unlogged = c.key === 'single-logged' ? of(unloggedCase) : undefined
    const bareRps = bare?.requests_per_second
    measuredRounds.push({
      ...run,
      ...(bareRps !== undefined ? { adjacent_bare_requests_per_second: bareRps } : {}),
      ...(unlogged
        ? {
            ratio_to_unlogged: ratio(run.requests_per_second, unlogged.requests_per_second),
            server_cpu_ratio_to_unlogged: ratio(
              run.server_cpu_ms_per_request,
              unlogged.server_cpu_ms_per_request,
            ),
            unlogged: {
              requests_per_second: unlogged.requests_per_second,
              server_cpu_ms_per_request: unlogged.server_cpu_ms_per_request,
            },
          }
        : {}),
      ...(shape
        ? {
            ratio_to_shape: ratio(run.requests_per_second, shape.requests_per_second),
            shape: {
              requests_per_second: shape.requests_per_second,
              server_cpu_ms_per_request: shape.server_cpu_ms_per_request,
              server_system_cpu_ms_per_request: shape.server_system_cpu_ms_per_request,
              ratio_to_bare: bareRps ? ratio(shape.requests_per_second, bareRps) : null,
            },
          }
        : {}),
      ratio_to_bare: bareRps ? ratio(run.requests_per_second, bareRps) : c.key === 'bare' ? 1 : null,
    })
    const last = measuredRounds.at(-1) as Measured
    log(
      `  ${c.key} round ${round + 1}: ${run.requests_per_second} req/s, x bare ${last.ratio_to_bare}` +
        `${last.ratio_to_shape === undefined ? '' : `, x shape ${last.ratio_to_shape}`}` +
        `${last.ratio_to_unlogged === undefined ? '' : `, x unlogged ${last.ratio_to_unlogged} (server CPU ms a request ${run.server_cpu_ms_per_request} / ${last.unlogged?.server_cpu_ms_per_request}: x${last.server_cpu_ratio_to_unlogged})`}` +
        `, load ${run.load_average.join('-')}`,
    )
  }
  const byRatio = [...measuredRounds].sort(
    (a, b) => (a.ratio_to_bare ?? a.requests_per_second) - (b.ratio_to_bare ?? b.requests_per_second),
  )
  const median = byRatio[Math.floor(byRatio.length / 2)] as Measured
  const ratios = byRatio.map((r) => r.ratio_to_bare ?? 0)
  const shapeRatios = measuredRounds.flatMap((r) =>
    r.ratio_to_shape === undefined ? [] : [r.ratio_to_shape],
  )
  const unloggedRatios = measuredRounds.flatMap((r) =>
    r.ratio_to_unlogged === undefined ? [] : [r.ratio_to_unlogged],
  )
  const row = {
    key: c.key,
    name: c.name,
    ...median,
    ratio_range: [Math.min(...ratios), Math.max(...ratios)],
    rounds: measuredRounds,
  }
  rows.push(row)
  log(
    `${c.name}: ${median.requests_per_second} req/s (median round), x bare ${median.ratio_to_bare} (rounds ${ratios.join(', ')})${shapeRatios.length > 0 ? `, x shape (rounds ${shapeRatios.join(', ')})` : ''}${unloggedRatios.length > 0 ? `, x unlogged (rounds ${unloggedRatios.join(', ')})` : ''}, p50 ${median.p50_ms} ms, p99 ${median.p99_ms} ms, errors ${median.errors + median.non2xx}; ` +
      `per request: ${median.queries_per_request} queries, CPU ms server ${median.server_cpu_ms_per_request}, postgres ${median.postgres_cpu_ms_per_request}, load generator ${median.load_generator_cpu_ms_per_request}`,
  )
}
session?.disconnect()

await bare.close()
await app.close()
await loggedApp.close()
await dbh.close()
fs.rmSync(dataDir, { recursive: true, force: true })

const pad = (s: string, n: number) => s.padEnd(n)
console.log(
  `\n${pad('case', 56)} ${pad('req/s', 7)} ${pad('x bare', 6)} ${pad('rounds', 16)} ${pad('p50 ms', 6)} ${pad('p99 ms', 6)} errors  (x bare: median round, to the bare route in slices alternating with it)`,
)
for (const r of rows) {
  console.log(
    `${pad(r.name, 56)} ${pad(String(r.requests_per_second), 7)} ${pad(String(r.ratio_to_bare ?? ''), 6)} ${pad(r.ratio_range.join('-'), 16)} ${pad(String(r.p50_ms), 6)} ${pad(String(r.p99_ms), 6)} ${r.errors + r.non2xx}`,
  )
}
const out = path.join(import.meta.dirname, 'results', `api${dbh.backend === 'pglite' ? '-pglite' : ''}.json`)
fs.mkdirSync(path.dirname(out), { recursive: true })
fs.writeFileSync(
  out,
  `${JSON.stringify(
    {
      bench: 'api',
      machine: { ...machine, postgres },
      v8_flags: v8Flags,
      backend: dbh.backend,
      day: { date: day.date, wallet_records: day.wallets, holders },
      seconds,
      warmup_seconds: warmup,
      rounds,
      connections,
      token_verification: tokenVerification,
      results: rows,
    },
    null,
    2,
  )}\n`,
)
log(`written ${path.relative(process.cwd(), out)}`)
