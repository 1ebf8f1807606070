import { randomUUID } from 'node:crypto'
import { type Address, createWalletClient, encodeFunctionData, http as viemHttp } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { allowlistAbi, PERMISSION, riverAbi } from '../chain/abi.ts'
import { toAddress } from '../common/address.ts'
import type { DbHandle } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { devnetRiverAbi } from '../devnet/abi.ts'
import { devAccount } from '../devnet/accounts.ts'
import { createDevnetClients } from '../devnet/blocks.ts'
import { createPlatformService } from '../platform/service.ts'
import { devnetFollower, dumpEvents } from './helpers/chain.ts'
import { startTestDevnet, type TestDevnet } from './helpers/devnet.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()

describe.runIf(pgOk)('reorg handling (anvil snapshot / revert)', () => {
  let devnet: TestDevnet
  const handles: DbHandle[] = []
  const freshDb = async () => {
    const dbh = await migratedTestDatabase()
    handles.push(dbh)
    return dbh.db
  }

  beforeAll(async () => {
    devnet = await startTestDevnet('reorg', {
      days: 4,
      walletCount: 20,
      dayIntervalMs: 0,
      blockIntervalMs: 60_000,
    })
    await devnet.simulator.stop() // this test drives the chain by hand
  }, 300_000)
  afterAll(async () => {
    await devnet?.stop()
    for (const h of handles) await h.close()
  })

  test('behavior: rows past the fork point are rolled back, the new branch is ingested, nothing lost or duplicated', async () => {
    const { publicClient, testClient } = createDevnetClients(devnet.rpcUrl)
    const send = createWalletClient({ transport: viemHttp(devnet.rpcUrl) })
    const river = devnet.contracts.river as Address
    const holders = devnet.simulator
      .state()
      .wallets.filter((w) => w.shares > 10n ** 15n)
      .map((w) => w.address)
    expect(holders.length).toBeGreaterThan(2)
    const transfer = async (from: Address, to: Address, value: bigint) =>
      send.sendTransaction({
        account: from,
        chain: null,
        to: river,
        data: encodeFunctionData({ abi: devnetRiverAbi, functionName: 'transfer', args: [to, value] }),
        gas: 200_000n,
      })
    const mineBlock = async () => {
      const latest = await publicClient.getBlock()
      await testClient.setNextBlockTimestamp({ timestamp: latest.timestamp + 12n })
      await testClient.mine({ blocks: 1 })
    }

    // a platform wallet waiting for the Allowlist
    const db = await freshDb()
    const repos = createRepos(db)
    const org = await repos.orgs.create({ name: 'reorg org', canAllowlist: true })
    const platform = createPlatformService(db)
    await platform.createAccount(org.id, 'acct', 'test')
    const walletAddress = `0x${randomUUID().replaceAll('-', '').padEnd(40, '7')}` as Address
    const wallet = await platform.createWallet(
      org,
      'acct',
      { address: walletAddress, type: 'ETH', allowlisted: true },
      'test',
    )

    const follower = devnetFollower(db, devnet)
    await follower.syncOnce()
    const snapshot = await testClient.snapshot()

    // branch A: two transfers and the wallet's allowlisting
    await transfer(holders[0]!, holders[1]!, 10n ** 15n)
    await transfer(holders[1]!, holders[2]!, 10n ** 14n)
    const allower = createWalletClient({ transport: viemHttp(devnet.rpcUrl) })
    await allower.sendTransaction({
      // the simulator's allower is the firewall's admin: the Allowlist's allower is the firewall
      account: devAccount('simulatorAllower').address,
      chain: null,
      to: devnet.firewall as Address,
      data: encodeFunctionData({
        abi: allowlistAbi,
        functionName: 'setAllowPermissions',
        args: [[walletAddress], [PERMISSION.DEPOSIT | PERMISSION.REDEEM]],
      }),
      gas: 200_000n,
    })
    await mineBlock()
    await mineBlock()
    const a = await follower.syncOnce()
    expect(a.inserted.lseth_transfers).toBe(2)
    expect((await repos.wallets.findByAddressAnyOrg(toAddress(walletAddress)))?.status).toBe('ALLOWLISTED')
    const transfersOnA = await repos.chain.count('lseth_transfers', devnet.chainId)

    // reorg: back to the snapshot, branch B has one different transfer and more blocks
    await testClient.revert({ id: snapshot })
    await mineBlock()
    await transfer(holders[2]!, holders[0]!, 10n ** 13n)
    await mineBlock()
    await mineBlock()
    const b = await follower.syncOnce()
    expect(b.rolledBackFrom).toBeDefined()
    expect(await repos.chain.count('lseth_transfers', devnet.chainId)).toBe(transfersOnA - 1)

    // what a fresh follower reads from the chain as it is now, exactly
    const fresh = await freshDb()
    await devnetFollower(fresh, devnet).syncOnce()
    expect(await dumpEvents(db)).toEqual(await dumpEvents(fresh))

    // the wallet's allowlisting was on the lost branch: back to NOT_READY, its change queued again
    const after = await repos.wallets.findByAddressAnyOrg(toAddress(walletAddress))
    expect([after?.status, after?.allowlisted]).toEqual(['NOT_READY', false])
    const changes = await repos.allowlistChanges.forWallet(wallet.id)
    expect(changes.at(-1)).toMatchObject({ state: 'pending', permissions: '5' })

    // balances still equal the chain
    const balances = await repos.chain.balances(devnet.chainId)
    for (const h of holders.slice(0, 3)) {
      const onChain = await publicClient.readContract({
        address: river,
        abi: riverAbi,
        functionName: 'balanceOf',
        args: [h],
      })
      expect(balances.get(h.toLowerCase()) ?? 0n).toBe(onChain)
    }
  })
})
