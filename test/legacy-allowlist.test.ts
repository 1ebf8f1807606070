import {
  type Address,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  http,
  parseAbi,
} from 'viem'
import { afterAll, describe, expect, test } from 'vitest'
import { allowlistLegacyAbi } from '../chain/abi.ts'
import { toContracts } from '../chain/addresses.ts'
import { createChainClient } from '../chain/client.ts'
import { createLogFetcher } from '../chain/log-fetcher.ts'
import { toAddress } from '../common/address.ts'
import { createLogger } from '../common/logger.ts'
import { migrate, openDb } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { startAnvil } from '../devnet/anvil.ts'
import { createFollower } from '../jobs/follower/index.ts'
import { createPlatformService } from '../platform/service.ts'
import { compileLegacyAllowlist } from './helpers/legacy-allowlist.ts'

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

describe('follower on the first mainnet Allowlist event shape (accounts indexed)', () => {
  test('behavior: accounts are recovered from the calldata; a log whose calldata lacks them is skipped', async () => {
    const anvil = await startAnvil()
    cleanups.push(() => anvil.stop())
    const transport = http(anvil.rpcUrl)
    const publicClient = createPublicClient({ transport })
    const sender = createWalletClient({ transport, account: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' })
    const deploy = await sender.sendTransaction({ chain: null, data: compileLegacyAllowlist() })
    const legacy = (await publicClient.waitForTransactionReceipt({ hash: deploy })).contractAddress as Address

    const dbh = await openDb({})
    cleanups.push(() => dbh.close())
    await migrate(dbh.db)
    const repos = createRepos(dbh.db)
    const org = await repos.orgs.create({ name: 'legacy', canAllowlist: true })
    const platform = createPlatformService(dbh.db)
    await platform.createAccount(org.id, 'a', 'test')
    const a1 = '0x00000000000000000000000000000000000000a1'
    const b2 = '0x00000000000000000000000000000000000000b2'
    const c3 = '0x00000000000000000000000000000000000000c3'
    await platform.createWallet(org, 'a', { address: a1, type: 'ETH', allowlisted: true }, 'test')

    const direct = encodeFunctionData({
      abi: allowlistLegacyAbi,
      functionName: 'allow',
      args: [
        [a1, b2],
        [5n, 0n],
      ],
    })
    await publicClient.waitForTransactionReceipt({
      hash: await sender.sendTransaction({ chain: null, to: legacy, data: direct }),
    })
    const wrapped = encodeFunctionData({
      abi: parseAbi(['function execute(bytes call)']),
      functionName: 'execute',
      args: [encodeFunctionData({ abi: allowlistLegacyAbi, functionName: 'allow', args: [[c3], [5n]] })],
    })
    await publicClient.waitForTransactionReceipt({
      hash: await sender.sendTransaction({ chain: null, to: legacy, data: wrapped }),
    })

    const client = createChainClient({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId })
    const follower = createFollower({
      db: dbh.db,
      client,
      fetcher: createLogFetcher({ client }),
      chainId: anvil.chainId,
      contracts: toContracts({ river: legacy, redeemManager: legacy, allowlist: legacy, startBlock: 0n }),
      confirmations: 0,
      logger: createLogger({ level: 'silent' }),
    })
    await follower.syncOnce()
    const rows = await dbh.db('allowlist_permissions').select('address', 'permissions').orderBy('position')
    expect(rows).toEqual([
      { address: a1, permissions: '5' },
      { address: b2, permissions: '0' },
    ])
    expect((await repos.wallets.findByAddressAnyOrg(toAddress(a1)))?.status).toBe('ALLOWLISTED')
  })
})
