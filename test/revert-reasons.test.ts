import { type Address, createWalletClient, http as viemHttp } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { allowlistAbi, PERMISSION } from '../chain/abi.ts'
import { createChainClient } from '../chain/client.ts'
import { REVERT_MEANINGS } from '../chain/revert-reasons.ts'
import { createLogger } from '../common/logger.ts'
import { devnetAllowlistAbi } from '../devnet/abi.ts'
import { devAccount } from '../devnet/accounts.ts'
import { createJobs } from '../jobs/index.ts'
import { createInlineRunner, type JobRunner } from '../jobs/runner.ts'
import { http, orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { startTestDevnet, type TestDevnet } from './helpers/devnet.ts'
import { postgresAvailable } from './helpers/services.ts'
import { until } from './helpers/webhook-receiver.ts'

const pgOk = await postgresAvailable()

describe.runIf(pgOk)('readable revert reasons on wallets (API -> allowlist job -> devnet Allowlist)', () => {
  let devnet: TestDevnet
  let api: TestApi
  let runner: JobRunner

  beforeAll(async () => {
    devnet = await startTestDevnet('revert-reasons', {
      days: 1,
      walletCount: 10,
      dayIntervalMs: 0,
      blockIntervalMs: 100,
    })
    api = await startTestApi('postgres')
    const jobs = createJobs({
      db: api.dbh.db,
      logger: createLogger({ level: 'silent' }),
      chain: {
        chainId: devnet.chainId,
        rpcUrl: devnet.rpcUrl,
        contracts: { ...devnet.contracts, startBlock: devnet.deployBlock },
        allowerPrivateKey: devnet.allowerPrivateKey,
      },
      confirmations: 0,
    })
    runner = createInlineRunner(jobs.processors, createLogger({ level: 'silent' }))
    await runner.start()
    await runner.every('allowlist', 200)
  }, 300_000)
  afterAll(async () => {
    await runner?.close()
    await api?.close()
    await devnet?.stop()
  })

  const chain = () => createChainClient({ rpcUrl: devnet.rpcUrl, chainId: devnet.chainId })

  /** Sends `functionName` on the Allowlist as dev account `role`; returns the receipt status. */
  async function asRole(
    role: 'denier' | 'admin',
    write: (w: ReturnType<typeof walletOf>) => Promise<`0x${string}`>,
  ) {
    const hash = await write(walletOf(role))
    return (await chain().waitForTransactionReceipt({ hash, timeout: 30_000, pollingInterval: 100 })).status
  }
  function walletOf(role: 'denier' | 'admin') {
    return createWalletClient({
      account: privateKeyToAccount(devAccount(role).privateKey),
      transport: viemHttp(devnet.rpcUrl),
    })
  }

  /** Creates an account `key` with one wallet at `address` and waits for the wallet's revert reason. */
  async function revertedReason(key: string, address: Address): Promise<string> {
    const org = await orgWithToken(api)
    const call = http(api.url, org.token)
    expect((await call('POST', '/v0/platform/accounts', { key })).status).toBe(201)
    const wallet = await call('POST', `/v0/platform/accounts/${key}/wallets`, { address, type: 'ETH' })
    expect(wallet.status).toBe(200)
    const failed = await until('revert recorded', async () => {
      const w = await call('GET', `/v0/platform/wallets/${wallet.body.id}`)
      return w.body.status_reason ? w.body : undefined
    })
    expect(failed.allowlisted).toBe(false)
    return failed.status_reason as string
  }

  test('behavior: a denied address reverts with AttemptToRemoveDenyPermission, stored on the wallet in words', async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address
    const status = await asRole('denier', (w) =>
      w.writeContract({
        chain: null,
        address: devnet.contracts.allowlist as Address,
        abi: allowlistAbi,
        functionName: 'setDenyPermissions',
        args: [[address], [PERMISSION.DENY]],
        gas: 200_000n,
      }),
    )
    expect(status).toBe('success')
    const reason = await revertedReason('denied', address)
    expect(reason).toContain(
      `reverted: AttemptToRemoveDenyPermission(): ${REVERT_MEANINGS.AttemptToRemoveDenyPermission}`,
    )
    expect(reason).not.toMatch(/0x[0-9a-f]{8}(?![0-9a-f])/i)
  })

  test('behavior: an allower key that lost its role reverts with Unauthorized(allower), stored on the wallet in words', async () => {
    const allower = privateKeyToAccount(devnet.allowerPrivateKey as `0x${string}`).address
    const status = await asRole('admin', (w) =>
      w.writeContract({
        chain: null,
        address: devnet.contracts.allowlist as Address,
        abi: devnetAllowlistAbi,
        functionName: 'setAllower',
        args: [allower, false],
        gas: 200_000n,
      }),
    )
    expect(status).toBe('success')
    const reason = await revertedReason('unauthorized', privateKeyToAccount(generatePrivateKey()).address)
    expect(reason).toContain(`reverted: Unauthorized(${allower}): ${REVERT_MEANINGS.Unauthorized}`)
  })
})
