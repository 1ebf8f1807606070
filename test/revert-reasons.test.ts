import { type Address, encodeFunctionData, getAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { writeSelector } from '../chain/allowlist-route.ts'
import { REVERT_MEANINGS } from '../chain/revert-reasons.ts'
import { devnetFirewallAbi } from '../devnet/abi.ts'
import { http, orgWithToken, type TestApi } from './helpers/api.ts'
import { denyOnChain, sendToFirewall } from './helpers/chain.ts'
import type { TestDevnet } from './helpers/devnet.ts'
import { type DevnetStack, startDevnetStack } from './helpers/devnet-stack.ts'
import { postgresAvailable } from './helpers/services.ts'
import { until } from './helpers/webhook-receiver.ts'

const pgOk = await postgresAvailable()

describe.runIf(pgOk)('readable revert reasons on wallets (API -> allowlist job -> devnet Allowlist)', () => {
  let stack: DevnetStack
  let devnet: TestDevnet
  let api: TestApi

  beforeAll(async () => {
    stack = await startDevnetStack('revert-reasons', {
      devnet: { days: 1, walletCount: 10, dayIntervalMs: 0, blockIntervalMs: 100 },
      periodic: ['allowlist'],
    })
    ;({ devnet, api } = stack)
  }, 300_000)
  afterAll(() => stack?.close())

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
    expect(await denyOnChain(devnet, address)).toBe('success')
    const reason = await revertedReason('denied', address)
    expect(reason).toContain(
      `reverted: AttemptToRemoveDenyPermission(): ${REVERT_MEANINGS.AttemptToRemoveDenyPermission}`,
    )
    expect(reason).not.toMatch(/0x[0-9a-f]{8}(?![0-9a-f])/i)
  })

  test('behavior: an allower key that lost its role is named on the wallet in words, with the firewall and the selector it may not call', async () => {
    const allower = privateKeyToAccount(devnet.allowerPrivateKey as `0x${string}`).address
    // the firewall's admin takes the write from its executor (the writer's key): the firewall refuses it
    const revoke = encodeFunctionData({
      abi: devnetFirewallAbi,
      functionName: 'allowExecutor',
      args: [writeSelector('setAllowPermissions'), false],
    })
    expect(await sendToFirewall(devnet, 'simulatorAllower', revoke)).toBe('success')
    const reason = await revertedReason('unauthorized', privateKeyToAccount(generatePrivateKey()).address)
    expect(reason).toBe(
      `allowlist change (create) waiting: the allowlist writer's key ${allower} cannot write the Allowlist ` +
        `${getAddress(devnet.contracts.allowlist)}: its allower is ${getAddress(devnet.firewall)}, a firewall ` +
        `whose executor (this key) may not call setAllowPermissions (${writeSelector('setAllowPermissions')}): ` +
        'its admin must allow it',
    )
  })
})
