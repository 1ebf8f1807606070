/**
 * Pause, reactivate and remove reach the chain: the flow of a platform (a new account and wallet, allowlisted;
 * the account paused, reactivated, removed) on the devnet's versioned history, at each protocol version of the
 * Allowlist (0.4.0, 0.5.0, under River 1.0.0, 1.2.1) and across each upgrade's block, with one revert injected
 * into every run (the node answers a write's simulation "execution reverted" without a reason, as the one seen in
 * the field). After each step the Allowlist's `getPermissions` must equal what the wallet's state asks.
 * ALLOWLIST_REACH_RUNS sets the runs per version (default 2; 25 gives the 100 runs).
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { type Address, type Hex, parseAbi } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { writeSelector } from '../chain/allowlist-route.ts'
import { createChainClient } from '../chain/client.ts'
import { toAddress } from '../common/address.ts'
import { createLogger } from '../common/logger.ts'
import { ALLOW_MASK } from '../common/permissions.ts'
import { createRepos, type OrgRow } from '../db/repos/index.ts'
import { type LaunchedDevnet, launchDevnet } from '../devnet/index.ts'
import { createRng } from '../devnet/rng.ts'
import { createServiceMetrics } from '../metrics/index.ts'
import { createPlatformService } from '../platform/service.ts'
import { devnetAllowlistWriter, devnetFollower, runWriterAndFollower } from './helpers/chain.ts'
import { parsePrometheus } from './helpers/prometheus.ts'
import { type RpcCall, type RpcProxy, startRpcProxy } from './helpers/rpc-proxy.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const RUNS = Number(process.env.ALLOWLIST_REACH_RUNS ?? 2)
const STEP_TIMEOUT_MS = 30_000
const WRITE_SELECTORS = [writeSelector('allow'), writeSelector('setAllowPermissions')]
const permissionsAbi = parseAbi(['function getPermissions(address) view returns (uint256)'])

/** Whether a JSON-RPC call is the simulation (`eth_call`) of an Allowlist write. */
function isWriteSimulation(call: RpcCall): boolean {
  if (call.method !== 'eth_call' || !Array.isArray(call.params)) return false
  const tx = call.params[0] as { data?: Hex; input?: Hex } | undefined
  const data = (tx?.data ?? tx?.input ?? '').toLowerCase()
  return WRITE_SELECTORS.some((selector) => data.startsWith(selector))
}

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

describe.runIf(pgOk)('pause, reactivate and remove reach the chain in every protocol version', () => {
  let devnet: LaunchedDevnet
  let proxy: RpcProxy
  let org: OrgRow
  let db: Awaited<ReturnType<typeof migratedTestDatabase>>['db']
  let injections = 0
  const rng = createRng(36)
  const logger = createLogger({ level: process.env.REACH_LOG ?? 'silent' })

  beforeAll(async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-reach-'))
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
    devnet = await launchDevnet({
      dataDir,
      days: 4,
      walletCount: 10,
      history: 'versioned',
      upgrades: { v05Day: 1, v1Day: 2, v12Day: 3 },
      dayIntervalMs: 0, // days only when the test runs them; others' transactions mined every 100 ms
      blockIntervalMs: 100,
    })
    cleanups.push(() => devnet.stop())
    await devnet.buildHistory({ days: 1 })
    devnet.goLive()
    const dbh = await migratedTestDatabase()
    cleanups.push(() => dbh.close())
    db = dbh.db
    org = await createRepos(db).orgs.create({ name: 'reach', canAllowlist: true })
    proxy = await startRpcProxy({
      upstream: devnet.rpcUrl,
      faults: {
        revert: (call) => {
          if (injections === 0 || !isWriteSimulation(call)) return false
          injections--
          return true
        },
      },
    })
    cleanups.push(() => proxy.stop())
    const writer = devnetAllowlistWriter(db, devnet, { rpcUrl: proxy.url, receiptTimeoutMs: 10_000, logger })
    const follower = devnetFollower(db, devnet)
    const runner = await runWriterAndFollower(writer, follower, logger)
    cleanups.push(() => runner.close())
  }, 180_000)

  const chain = () => createChainClient({ rpcUrl: devnet.rpcUrl, chainId: devnet.chainId })
  const onChain = (address: Address) =>
    chain().readContract({
      address: devnet.contracts.allowlist as Address,
      abi: permissionsAbi,
      functionName: 'getPermissions',
      args: [address],
    })

  /** Waits until the chain holds `mask` for the wallet and the wallet's stored state agrees. */
  async function reaches(address: Address, mask: bigint, status: string, step: string) {
    const repos = createRepos(db)
    const deadline = Date.now() + STEP_TIMEOUT_MS
    for (;;) {
      const [permissions, wallet] = await Promise.all([
        onChain(address),
        repos.wallets.findByAddressAnyOrg(toAddress(address)),
      ])
      if (permissions === mask && wallet?.status === status && wallet.chain_permissions === mask.toString()) {
        if (process.env.REACH_TRACE) console.log('TRACE', step, Date.now() - deadline + STEP_TIMEOUT_MS)
        return
      }
      if (Date.now() > deadline) {
        const changes = wallet ? await repos.allowlistChanges.forWallet(wallet.id) : []
        throw new Error(
          `${step}: the chain holds ${permissions} for ${address}, expected ${mask}; wallet ` +
            `${JSON.stringify(wallet)}; changes ${JSON.stringify(changes)}`,
        )
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  /**
   * One run: a new account and wallet allowlisted, then paused, reactivated and removed, each checked on chain;
   * a revert injected once, at a step drawn from the seeded generator. `acrossUpgrade`: the pause's simulations
   * are held at the proxy until the next day (with its upgrade) is mined, so the route the writer read before
   * meets the upgraded Allowlist.
   */
  async function run(label: string, acrossUpgrade = false) {
    const platform = createPlatformService(db)
    const key = `${label}-${rng.next().toString(36).slice(2, 10)}`
    const address = privateKeyToAccount(generatePrivateKey()).address
    const injectAt = Math.floor(rng.next() * 4)
    const step = async (i: number, work: () => Promise<unknown>) => {
      if (i === injectAt) injections++
      await work()
    }
    await platform.createAccount(org.id, key, 'test')
    await step(0, () => platform.createWallet(org, key, { address, type: 'ETH', allowlisted: true }, 'test'))
    await reaches(address, ALLOW_MASK, 'ALLOWLISTED', `${label}: allowlist`)
    const release = acrossUpgrade ? holdWriteSimulations() : undefined
    await step(1, () => platform.transitionAccount(org.id, key, 'pause', 'test'))
    if (release) {
      await devnet.buildHistory({ days: 1 })
      release()
    }
    await reaches(address, 0n, 'PAUSED', `${label}: pause`)
    await step(2, () => platform.transitionAccount(org.id, key, 'reactivate', 'test'))
    await reaches(address, ALLOW_MASK, 'ALLOWLISTED', `${label}: reactivate`)
    await step(3, () => platform.transitionAccount(org.id, key, 'remove', 'test'))
    await reaches(address, 0n, 'REMOVED', `${label}: remove`)
  }

  /** Holds every write simulation at the proxy until the returned function is called. */
  function holdWriteSimulations(): () => void {
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    proxy.updateFaults({ hold: (call) => (isWriteSimulation(call) ? held : undefined) })
    return () => {
      proxy.updateFaults({ hold: () => undefined })
      release()
    }
  }

  /** The write the Allowlist takes now (the route a writer detects). */
  async function allowlistWrite(): Promise<string> {
    const { resolveAllowlistWriteRoute } = await import('../chain/allowlist-route.ts')
    return (
      await resolveAllowlistWriteRoute(chain(), devnet.contracts.allowlist as Address, devnet.allowerAddress)
    ).functionName
  }

  /** `RUNS` runs side by side (their changes share the writer's batches), then every injected revert was met. */
  async function runsAt(version: string) {
    const before = proxy.stats.reverts
    await Promise.all(Array.from({ length: RUNS }, (_, i) => run(`v${version}-${i}`)))
    expect(proxy.stats.reverts - before).toBe(RUNS)
    expect(injections).toBe(0)
  }

  test('behavior: in each version and across each upgrade, every run lands pause, reactivation and removal on chain despite a revert', async () => {
    expect(await allowlistWrite()).toBe('allow') // 0.4.0
    await runsAt('0.4.0')
    await run('to-0.5.0', true)
    expect(await allowlistWrite()).toBe('allow')
    await runsAt('0.5.0')
    await run('to-1.0.0', true)
    await runsAt('1.0.0')
    await run('to-1.2.1', true) // the held simulation of `allow` meets 1.2.1: a real revert without a reason
    expect(await allowlistWrite()).toBe('setAllowPermissions')
    await runsAt('1.2.1')
    const changes = await db('allowlist_changes').select('state')
    expect(changes.filter((c: { state: string }) => c.state === 'failed')).toEqual([])
  }, 600_000)

  test('behavior: a change that cannot land shows on the wallet, in the metrics and as a webhook event after one pass, and its note goes once it lands', async () => {
    const platform = createPlatformService(db)
    const key = 'stuck'
    const address = privateKeyToAccount(generatePrivateKey()).address
    await platform.createAccount(org.id, key, 'test')
    await platform.createWallet(org, key, { address, type: 'ETH', allowlisted: true }, 'test')
    await reaches(address, ALLOW_MASK, 'ALLOWLISTED', 'stuck: allowlist')
    const repos = createRepos(db)
    const metrics = createServiceMetrics({ db, confirmations: 0 })
    const scrape = async () => parsePrometheus(await metrics.registry.metrics())

    // every simulation reverts: the pause cannot land
    proxy.updateFaults({ revert: (call) => isWriteSimulation(call) })
    await platform.transitionAccount(org.id, key, 'pause', 'test')
    const noted = await until(async () => {
      const wallet = await repos.wallets.findByAddressAnyOrg(toAddress(address))
      return wallet?.status_reason ? wallet : undefined
    })
    expect(noted.status_reason).toMatch(
      /^allowlist change \(account_pause\) reverted: .+; retried in \d+ s \(attempt \d+\)$/,
    )
    expect(noted.allowlisted).toBe(true)
    const stuck = await scrape()
    expect(stuck.value('lsreport_allowlist_changes', { state: 'retrying' })).toBe(1)
    expect(stuck.value('lsreport_allowlist_exposed_wallets')).toBe(1)
    const events = await db('webhook_events').where({ type: 'wallet.allowlist_change_failed' }).select('body')
    const data = events.map((e: { body: string }) => JSON.parse(e.body).data)
    expect(data.filter((d: { address: string }) => d.address === address.toLowerCase())).toEqual([
      expect.objectContaining({ address: address.toLowerCase(), change: 'account_pause', final: false }),
    ])

    // the chain takes it again: the pause lands, the note goes, nothing is exposed
    proxy.updateFaults({ revert: () => false })
    await reaches(address, 0n, 'PAUSED', 'stuck: pause')
    await until(async () => {
      const wallet = await repos.wallets.findByAddressAnyOrg(toAddress(address))
      return wallet?.status_reason === null ? wallet : undefined
    })
    const after = await scrape()
    expect(after.value('lsreport_allowlist_changes', { state: 'retrying' })).toBe(0)
    expect(after.value('lsreport_allowlist_exposed_wallets')).toBe(0)
  }, 120_000)
})

/** Polls `probe` every 100 ms until it returns a value (30 s at most). */
async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + STEP_TIMEOUT_MS
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 100))
  }
}
