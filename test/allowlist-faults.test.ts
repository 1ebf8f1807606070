import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { type Address, parseEventLogs } from 'viem'
import { afterAll, describe, expect, test } from 'vitest'
import { allowlistAbi } from '../chain/abi.ts'
import { createChainClient } from '../chain/client.ts'
import { toAddress } from '../common/address.ts'
import { createLogger } from '../common/logger.ts'
import { createRepos } from '../db/repos/index.ts'
import { startDevnet } from '../devnet/index.ts'
import { createPlatformService } from '../platform/service.ts'
import { devnetAllowlistWriter, devnetFollower, runWriterAndFollower } from './helpers/chain.ts'
import { startRpcProxy } from './helpers/rpc-proxy.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

describe.runIf(pgOk)('allowlist writer through a faulty RPC', () => {
  test('behavior: with requests dropped and answers lost, every change lands exactly once', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-writer-faults-'))
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
    const devnet = await startDevnet({
      dataDir,
      days: 2,
      walletCount: 10,
      dayIntervalMs: 0,
      blockIntervalMs: 100,
      history: 'current', // the writer's 1.2.1 setAllowPermissions under faults
    })
    cleanups.push(() => devnet.stop())
    const dbh = await migratedTestDatabase()
    cleanups.push(() => dbh.close())

    const repos = createRepos(dbh.db)
    const org = await repos.orgs.create({ name: 'faults', canAllowlist: true })
    const platform = createPlatformService(dbh.db)
    await platform.createAccount(org.id, 'omnibus', 'test')
    const addresses = Array.from(
      { length: 24 },
      (_, i) => `0x${(0xfa000 + i).toString(16).padStart(40, '0')}`,
    )
    for (const address of addresses) {
      await platform.createWallet(org, 'omnibus', { address, type: 'ETH', allowlisted: true }, 'test')
    }

    const proxy = await startRpcProxy({
      upstream: devnet.rpcUrl,
      seed: 11,
      faults: {
        dropRate: 0.15,
        dropResponseRate: 0.25,
        httpErrorRate: 0.1,
        methods: [
          'eth_sendRawTransaction',
          'eth_getTransactionReceipt',
          'eth_call',
          'eth_getTransactionCount',
        ],
      },
    })
    cleanups.push(() => proxy.stop())
    const logger = createLogger({ level: 'silent' })
    const writer = devnetAllowlistWriter(dbh.db, devnet, {
      rpcUrl: proxy.url,
      batchSize: 5,
      receiptTimeoutMs: 5_000,
    })
    const follower = devnetFollower(dbh.db, devnet)
    const runner = await runWriterAndFollower(writer, follower, logger)
    cleanups.push(() => runner.close())

    const deadline = Date.now() + 90_000
    for (;;) {
      const wallets = await Promise.all(addresses.map((a) => repos.wallets.findByAddressAnyOrg(toAddress(a))))
      if (wallets.every((w) => w?.status === 'ALLOWLISTED')) break
      if (Date.now() > deadline)
        throw new Error(`not all ALLOWLISTED: ${wallets.map((w) => w?.status).join(',')}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    expect(proxy.stats.dropped + proxy.stats.droppedResponses + proxy.stats.httpErrors).toBeGreaterThan(0)

    // on chain: each address was granted by the service's allower exactly once
    const client = createChainClient({ rpcUrl: devnet.rpcUrl, chainId: devnet.chainId })
    const logs = await client.getLogs({
      address: devnet.contracts.allowlist as Address,
      fromBlock: devnet.deployBlock,
      toBlock: 'latest',
    })
    const granted = new Map<string, number>()
    for (const log of parseEventLogs({ abi: allowlistAbi, logs, eventName: 'SetAllowlistPermissions' })) {
      const tx = await client.getTransaction({ hash: log.transactionHash })
      if (tx.from.toLowerCase() !== devnet.allowerAddress.toLowerCase()) continue
      for (const account of log.args.accounts) {
        granted.set(account.toLowerCase(), (granted.get(account.toLowerCase()) ?? 0) + 1)
      }
    }
    expect(Object.fromEntries(addresses.map((a) => [a, granted.get(a)]))).toEqual(
      Object.fromEntries(addresses.map((a) => [a, 1])),
    )
    const changes = await dbh.db('allowlist_changes').select('state')
    expect(changes.every((c: { state: string }) => c.state === 'confirmed')).toBe(true)
  })
})
