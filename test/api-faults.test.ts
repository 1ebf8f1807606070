import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { allowlistAbi } from '../chain/abi.ts'
import { createChainClient } from '../chain/client.ts'
import { ALLOW_MASK } from '../common/permissions.ts'
import { type Db, openDb } from '../db/index.ts'
import { createRng } from '../devnet/rng.ts'
import { LIVE_WALLET_STATUSES } from '../platform/transitions.ts'
import { clientToken, freePort } from './helpers/api.ts'
import { devnetAllowlistWriter } from './helpers/chain.ts'
import { spawnCli, TEST_SIGNING_KEY_SECRET } from './helpers/cli.ts'
import { startTestDevnet, type TestDevnet } from './helpers/devnet.ts'
import { storeOrgClient } from './helpers/org-client.ts'
import { createTestDatabase, postgresAvailable } from './helpers/services.ts'

// SIGKILL of `lsreport api` while platforms create accounts and wallets and pause and reactivate them.
// What the service promises (docs/decisions.md "Errors"): an acknowledged write is never lost; a write cut by a
// crash is whole or absent (the row, its audit entry and its allowlist intent are one transaction); a
// retry never duplicates; the allowlist writer then brings the chain to the latest intents.

const pgOk = await postgresAvailable()
/** SIGKILLs of the API per backend: bounded in CI, more with FAULT_KILLS. */
const KILLS = Number(process.env.FAULT_KILLS ?? 3)
const SEED = Number(process.env.FAULT_SEED ?? 21)
const LANES = 6
/** Each kill costs ~6 s on a busy 2-core machine (a restart and its recovery): the bound grows with KILLS. */
const TEST_TIMEOUT_MS = 180_000 + KILLS * 12_000
const LIVE: readonly string[] = LIVE_WALLET_STATUSES

const cleanups: (() => Promise<unknown>)[] = []
let devnet: TestDevnet
beforeAll(async () => {
  devnet = await startTestDevnet('api-faults', {
    days: 2,
    walletCount: 10,
    dayIntervalMs: 0,
    blockIntervalMs: 100,
  })
}, 300_000)
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
  await devnet?.stop()
})

/** What a request came back with: an answer, or nothing (the process died under it). */
type Outcome = { status: number; body: Record<string, unknown> } | { lost: true }

/** The `lsreport api` process under test, restarted on the same port after each kill. */
class KilledApi {
  private server: Awaited<ReturnType<typeof spawnCli>> | undefined
  private token = ''
  private up: Promise<void> = Promise.resolve()
  readonly base: string
  log = ''

  constructor(
    private readonly env: Record<string, string>,
    private readonly client: { client_id: string; client_secret: string },
  ) {
    this.base = `http://127.0.0.1:${env.PORT}`
  }

  /** Starts the process and takes a token (the signing keys live in the database and survive restarts). */
  async start(): Promise<void> {
    this.server = await spawnCli(
      ['api'],
      this.env,
      async () => (await fetch(`${this.base}/ready`)).status === 200,
    )
    this.token = await clientToken(this.base, this.client)
  }

  /** SIGKILL now, then a restart that every lane waits for before its next request. */
  kill(): Promise<void> {
    const victim = this.server!
    this.up = (async () => {
      await new Promise<void>((resolve) => {
        victim.child.once('exit', () => resolve())
        victim.child.kill('SIGKILL')
      })
      this.log += victim.output()
      await this.start()
    })()
    return this.up
  }

  /** One request; a connection the dead process dropped is `{ lost: true }`, not an error. */
  async call(method: string, url: string, body?: unknown): Promise<Outcome> {
    await this.up
    try {
      const res = await fetch(`${this.base}${url}`, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      })
      const text = await res.text()
      return { status: res.status, body: text ? JSON.parse(text) : {} }
    } catch {
      return { lost: true }
    }
  }

  /** A read after a lost write: waits for the restarted process and retries until it answers. */
  async read(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
    for (;;) {
      const outcome = await this.call('GET', url)
      if (!('lost' in outcome)) return outcome
    }
  }

  async stop(): Promise<void> {
    await this.up
    if (this.server) this.log += this.server.output()
    await this.server?.stop()
  }
}

/** What the lanes saw: answers that break a promise, writes acknowledged, writes cut by a kill. */
interface Seen {
  problems: string[]
  acknowledged: number
  cut: number
}

/** What one lane believes after each answer: its accounts' and wallets' statuses. */
interface Model {
  accounts: Map<string, string>
  wallets: Map<string, { account: string; status: string }>
}

/**
 * One platform's lane of sequential writes, seeded: create accounts, attach Allowlist wallets, pause and
 * reactivate both. A write whose answer is lost is read back after the restart, and must show the state
 * before or after it, never something else; the lane then goes on from what it read.
 */
async function lane(api: KilledApi, index: number, running: () => boolean, seen: Seen): Promise<Model> {
  const problems = seen.problems
  const random = createRng(SEED * 100 + index).next
  const model: Model = { accounts: new Map(), wallets: new Map() }
  let nextWallet = 0
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]
  const expectAnswer = (what: string, outcome: Outcome, statuses: number[]) => {
    if ('lost' in outcome) {
      seen.cut++
      return
    }
    seen.acknowledged++
    if (!statuses.includes(outcome.status))
      problems.push(`${what}: ${outcome.status} ${JSON.stringify(outcome.body)}`)
  }
  while (running()) {
    const activeAccounts = [...model.accounts].filter(([, s]) => s === 'ACTIVE').map(([k]) => k)
    const roll = random()
    if (model.accounts.size < 3 || roll < 0.1) {
      const key = `lane${index}-acct${model.accounts.size}`
      const outcome = await api.call('POST', '/v0/platform/accounts', { key })
      expectAnswer(`create ${key}`, outcome, [201])
      const after =
        'lost' in outcome
          ? await api.read(`/v0/platform/accounts/${key}`)
          : { status: 200, body: outcome.body }
      if (after.status === 200) model.accounts.set(key, after.body.status as string)
      else if (after.status !== 404) problems.push(`read ${key} after a lost create: ${after.status}`)
    } else if (roll < 0.45 && activeAccounts.length > 0) {
      const key = pick(activeAccounts)!
      const address = `0x${(0xa91000000 + index * 0x10000 + nextWallet++).toString(16).padStart(40, '0')}`
      const outcome = await api.call('POST', `/v0/platform/accounts/${key}/wallets`, { address, type: 'ETH' })
      expectAnswer(`attach ${address}`, outcome, [200])
      const after =
        'lost' in outcome
          ? await api.read(`/v0/platform/wallets/${address}`)
          : { status: 200, body: outcome.body }
      if (after.status === 200)
        model.wallets.set(address, { account: key, status: after.body.status as string })
      else if (after.status !== 404) problems.push(`read ${address} after a lost attach: ${after.status}`)
    } else if (roll < 0.75) {
      const key = pick([...model.accounts.keys()])!
      const before = model.accounts.get(key)!
      const action = before === 'ACTIVE' ? 'pause' : 'reactivate'
      const outcome = await api.call('PATCH', `/v0/platform/accounts/${key}/${action}`)
      expectAnswer(`${action} ${key}`, outcome, [200])
      const after = 'lost' in outcome ? (await api.read(`/v0/platform/accounts/${key}`)).body : outcome.body
      const expected = action === 'pause' ? 'PAUSED' : 'ACTIVE'
      if (after.status !== before && after.status !== expected)
        problems.push(`${action} ${key}: from ${before} to ${String(after.status)}`)
      model.accounts.set(key, after.status as string)
      // the cascade moved the account's wallets: take their statuses from the service
      for (const [address, w] of model.wallets) {
        if (w.account === key)
          w.status = (await api.read(`/v0/platform/wallets/${address}`)).body.status as string
      }
    } else if (model.wallets.size > 0) {
      const address = pick([...model.wallets.keys()])!
      const w = model.wallets.get(address)!
      if (model.accounts.get(w.account) !== 'ACTIVE') continue
      const action = w.status === 'PAUSED' ? 'reactivate' : 'pause'
      const outcome = await api.call(
        'PATCH',
        `/v0/platform/accounts/${w.account}/wallets/${address}/${action}`,
      )
      expectAnswer(`${action} ${address}`, outcome, [200])
      const after =
        'lost' in outcome ? (await api.read(`/v0/platform/wallets/${address}`)).body : outcome.body
      const expected = action === 'pause' ? 'PAUSED' : 'NOT_READY'
      if (after.status !== w.status && after.status !== expected)
        problems.push(`${action} ${address}: from ${w.status} to ${String(after.status)}`)
      w.status = after.status as string
    }
  }
  return model
}

/**
 * The stored state is whole: one row per key and address, each account's and wallet's audit trail runs
 * from its creation to its current status, account and wallet statuses agree, and every Allowlist wallet's
 * latest intent is the mask its status asks for.
 */
async function expectWholeState(db: Db, orgId: string, models: Model[]) {
  const problems: string[] = []
  const accounts = await db('accounts').where({ org_id: orgId })
  const wallets = await db('wallets').where({ org_id: orgId })
  const audit = await db('status_changes').orderBy('id')
  const intents = await db('allowlist_changes').orderBy('id')
  const expectedAccounts = new Map(models.flatMap((m) => [...m.accounts]))
  const expectedWallets = new Map(models.flatMap((m) => [...m.wallets]))
  expect(accounts.map((a) => a.key).sort()).toEqual([...expectedAccounts.keys()].sort())
  expect(wallets.map((w) => w.address).sort()).toEqual([...expectedWallets.keys()].sort())
  const trail = (entity: string, row: { id: string; status: string }, name: string) => {
    const changes = audit.filter((c) => c.entity === entity && c.entity_id === row.id)
    let status: string | null = null
    for (const c of changes) {
      if (c.from_status !== status)
        problems.push(`${name}: audit goes ${c.from_status}->${c.to_status} after ${status}`)
      status = c.to_status
    }
    if (status !== row.status) problems.push(`${name}: status ${row.status}, audit ends at ${status}`)
  }
  for (const a of accounts) {
    trail('account', a, a.key)
    if (a.status !== expectedAccounts.get(a.key))
      problems.push(`${a.key}: ${a.status}, acknowledged ${expectedAccounts.get(a.key)}`)
  }
  for (const w of wallets) {
    trail('wallet', w, w.address)
    const account = accounts.find((a) => a.id === w.account_id)!
    if (w.status !== expectedWallets.get(w.address)?.status)
      problems.push(`${w.address}: ${w.status}, acknowledged ${expectedWallets.get(w.address)?.status}`)
    if (account.status === 'PAUSED' && LIVE.includes(w.status))
      problems.push(`${w.address} is ${w.status} in a paused account`)
    if (w.paused_by === 'account' && account.status !== 'PAUSED')
      problems.push(`${w.address} paused by an ${account.status} account`)
    const own = intents.filter((i) => i.wallet_id === w.id)
    const wanted = LIVE.includes(w.status) ? ALLOW_MASK : 0n
    if (own.length === 0) problems.push(`${w.address} has no allowlist intent`)
    else if (BigInt(own.at(-1).permissions) !== wanted)
      problems.push(`${w.address} (${w.status}): latest intent ${own.at(-1).permissions}, wants ${wanted}`)
  }
  expect(problems).toEqual([])
  return wallets as { id: string; address: string; status: string }[]
}

/** Runs the allowlist writer until no change is open; every wallet's on-chain mask is its latest intent. */
async function expectChainMatchesIntents(db: Db, wallets: { id: string; address: string; status: string }[]) {
  const client = createChainClient({ rpcUrl: devnet.rpcUrl, chainId: devnet.chainId })
  const writer = devnetAllowlistWriter(db, devnet)
  for (let pass = 0; pass < 20; pass++) {
    await writer.runOnce()
    const open = await db('allowlist_changes')
      .whereIn('state', ['pending', 'submitted'])
      .count<{ n: string }[]>('* as n')
    if (Number(open[0]!.n) === 0) break
  }
  const intents = await db('allowlist_changes').where({ state: 'confirmed' }).orderBy('id')
  for (const w of wallets) {
    const latest = intents.filter((i) => i.wallet_id === w.id).at(-1)
    const onChain = await client.readContract({
      address: devnet.contracts.allowlist as Address,
      abi: allowlistAbi,
      functionName: 'getPermissions',
      args: [w.address as Address],
    })
    expect(onChain, w.address).toBe(BigInt(latest?.permissions ?? -1))
    expect(onChain, w.address).toBe(LIVE.includes(w.status) ? ALLOW_MASK : 0n)
  }
}

/** Lanes write while the API is killed KILLS times at seeded random points; returns what they saw. */
async function writeThroughKills(api: KilledApi) {
  const random = createRng(SEED).next
  const seen: Seen = { problems: [], acknowledged: 0, cut: 0 }
  let running = true
  const lanes = Array.from({ length: LANES }, (_, i) => lane(api, i, () => running, seen))
  for (let k = 0; k < KILLS; k++) {
    await new Promise((r) => setTimeout(r, 300 + random() * 900))
    await api.kill()
  }
  await new Promise((r) => setTimeout(r, 500))
  running = false
  const models = await Promise.all(lanes)
  expect(seen.problems, api.log.slice(-5000)).toEqual([])
  // the kills landed mid-write: some writes were cut, more were acknowledged
  expect(seen.cut).toBeGreaterThan(0)
  expect(seen.acknowledged).toBeGreaterThan(seen.cut)
  return models
}

async function setup(env: Record<string, string>) {
  const { org, client } = await storeOrgClient(env, 'Crash Org')
  const api = new KilledApi(
    { ...env, PORT: String(await freePort()), RATE_LIMIT_MAX: '1000000', LOG_LEVEL: 'warn' },
    client,
  )
  cleanups.push(() => api.stop())
  await api.start()
  return { api, orgId: org.id }
}

describe('lsreport api under SIGKILL during account and wallet writes', () => {
  test.runIf(pgOk)(
    `behavior: ${KILLS} SIGKILLs on Postgres: acknowledged writes kept once, cut writes whole or absent, chain ends at the latest intents`,
    async () => {
      const database = await createTestDatabase()
      cleanups.push(database.drop)
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-api-faults-'))
      cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
      const { api, orgId } = await setup({
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        SIGNING_KEY_SECRET: TEST_SIGNING_KEY_SECRET,
      })
      const models = await writeThroughKills(api)
      await api.stop()
      const dbh = await openDb({ databaseUrl: database.url, poolMax: 2 })
      cleanups.push(() => dbh.close())
      const wallets = await expectWholeState(dbh.db, orgId, models)
      expect(wallets.length).toBeGreaterThan(LANES)
      await expectChainMatchesIntents(dbh.db, wallets)
    },
    TEST_TIMEOUT_MS,
  )

  test(
    `behavior: ${KILLS} SIGKILLs on the embedded PGlite: the data directory reopens with every acknowledged write, whole`,
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-api-faults-pglite-'))
      cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
      const { api, orgId } = await setup({ DATA_DIR: dataDir })
      const models = await writeThroughKills(api)
      await api.stop()
      const dbh = await openDb({ pgliteDir: path.join(dataDir, 'pg') })
      cleanups.push(() => dbh.close())
      const wallets = await expectWholeState(dbh.db, orgId, models)
      await expectChainMatchesIntents(dbh.db, wallets)
    },
    TEST_TIMEOUT_MS,
  )
})
