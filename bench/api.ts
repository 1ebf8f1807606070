/**
 * Benchmark: API latency and throughput (autocannon over 127.0.0.1) for a single-wallet read
 * (GET /v0/platform/wallets/{address}, authenticated) and an account read with 50 wallets, compared in the
 * same run with a bare Fastify route returning a constant (the framework's limit on this machine).
 * Database: Postgres when DATABASE_URL is set, else PGlite in memory.
 *
 *   npx tsx bench/api.ts [seconds=5] [connections=10]
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import Fastify from 'fastify'
import { buildApp } from '../api/app.ts'
import { loadSigningKey } from '../api/auth/keys.ts'
import { createClient, createOrg } from '../cli/admin.ts'
import { loadConfig } from '../common/config.ts'
import { createLogger } from '../common/logger.ts'
import { createPlatformService } from '../platform/service.ts'
import { openScratchDb } from './scratch-db.ts'

const seconds = Number(process.argv[2] ?? 5)
const connections = Number(process.argv[3] ?? 10)
const databaseUrl = process.env.DATABASE_URL

async function measure(name: string, url: string, headers: Record<string, string> = {}) {
  const result = await autocannon({ url, connections, duration: seconds, headers })
  const row = {
    name,
    requests_per_second: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.errors + result.non2xx,
  }
  console.log(
    `${name}: ${row.requests_per_second} req/s, p50 ${row.p50_ms} ms, p99 ${row.p99_ms} ms, errors ${row.errors}`,
  )
  return row
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-bench-'))
const dbh = await openScratchDb(databaseUrl)
const port = 18_000 + Math.floor(Math.random() * 1000)
const config = loadConfig({
  DATA_DIR: dataDir,
  PORT: String(port),
  LOG_LEVEL: 'silent',
  RATE_LIMIT_MAX: '1000000',
})
const app = await buildApp({
  config,
  logger: createLogger({ level: 'silent' }),
  db: dbh.db,
  signingKey: await loadSigningKey({ pem: undefined, dataDir }),
})
await app.listen({ host: '127.0.0.1', port })
const base = `http://127.0.0.1:${port}`

const org = await createOrg(dbh.db, { name: 'bench', canAllowlist: true })
const client = await createClient(dbh.db, { orgId: org.id, scopes: 'read:platform write:platform' })
const platform = createPlatformService(dbh.db)
await platform.createAccount(org.id, 'omnibus', 'bench')
const fullOrg = { id: org.id, can_allowlist: true }
for (let i = 0; i < 50; i++) {
  const address = `0x${(0xbe000 + i).toString(16).padStart(40, '0')}`
  await platform.createWallet(fullOrg, 'omnibus', { address, type: 'ETH', allowlisted: i % 2 === 0 }, 'bench')
}
const token = (await (
  await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      audience: base,
      client_id: client.client_id,
      client_secret: client.client_secret,
    }),
  })
).json()) as { access_token: string }
const auth = { authorization: `Bearer ${token.access_token}` }

const bare = Fastify()
bare.get('/constant', async () => ({ status: 'ok' }))
const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 })

console.log(`backend: ${dbh.backend}; ${seconds}s per case, ${connections} connections`)
const results = [
  await measure('bare fastify constant', `${bareUrl}/constant`),
  await measure(
    'GET wallet by address',
    `${base}/v0/platform/wallets/0x00000000000000000000000000000000000be000`,
    auth,
  ),
  await measure('GET account (50 wallets)', `${base}/v0/platform/accounts/omnibus`, auth),
]

await bare.close()
await app.close()
await dbh.close()
fs.rmSync(dataDir, { recursive: true, force: true })
const out = path.join(import.meta.dirname, 'results', 'api.json')
fs.mkdirSync(path.dirname(out), { recursive: true })
fs.writeFileSync(
  out,
  `${JSON.stringify({ bench: 'api', backend: dbh.backend, seconds, connections, results }, null, 2)}\n`,
)
console.log(`written ${path.relative(process.cwd(), out)}`)
