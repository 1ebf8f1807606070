import { type Address, createWalletClient, encodeFunctionData, type Hash, http as viemHttp } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { allowlistAbi, PERMISSION, riverAbi } from '../chain/abi.ts'
import { createRepos } from '../db/repos/index.ts'
import { devnetRiverAbi } from '../devnet/abi.ts'
import { createDevnetClients } from '../devnet/blocks.ts'
import { http, orgWithToken, type TestApi } from './helpers/api.ts'
import { denyOnChain } from './helpers/chain.ts'
import type { TestDevnet } from './helpers/devnet.ts'
import { type DevnetStack, startDevnetStack } from './helpers/devnet-stack.ts'
import { postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const ETH = 10n ** 18n

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await fn()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 150))
  }
}

describe.runIf(pgOk)('allowlist onboarding end to end (API -> allowlist job -> devnet -> follower)', () => {
  let stack: DevnetStack
  let devnet: TestDevnet
  let api: TestApi

  beforeAll(async () => {
    stack = await startDevnetStack('allowlist', {
      devnet: { days: 3, walletCount: 10, dayIntervalMs: 0, blockIntervalMs: 100 },
      periodic: ['sync', 'allowlist'],
    })
    ;({ devnet, api } = stack)
  }, 300_000)
  afterAll(() => stack?.close())

  const chain = () => stack.chain
  const river = () => devnet.contracts.river as Address

  /** Sends a deposit of 1 ETH from `from` (impersonated) and returns its receipt status. */
  async function deposit(from: Address): Promise<'success' | 'reverted'> {
    const wallet = createWalletClient({ transport: viemHttp(devnet.rpcUrl) })
    const hash: Hash = await wallet.sendTransaction({
      account: from,
      chain: null,
      to: river(),
      data: encodeFunctionData({ abi: devnetRiverAbi, functionName: 'deposit' }),
      value: ETH,
      gas: 300_000n,
    })
    const receipt = await chain().waitForTransactionReceipt({ hash, timeout: 30_000, pollingInterval: 100 })
    return receipt.status
  }

  async function newFundedAddress(): Promise<Address> {
    const address = privateKeyToAccount(generatePrivateKey()).address
    await createDevnetClients(devnet.rpcUrl).testClient.setBalance({ address, value: 100n * ETH })
    return address
  }

  test('behavior: an allowlisted wallet becomes ALLOWLISTED, can deposit; account pause blocks deposits; reactivate restores them', async () => {
    const org = await orgWithToken(api)
    const call = http(api.url, org.token)
    const address = await newFundedAddress()
    expect(await deposit(address)).toBe('reverted') // not on the Allowlist yet
    await call('POST', '/v0/platform/accounts', { key: 'custody-1' })
    const created = await call('POST', '/v0/platform/accounts/custody-1/wallets', { address, type: 'ETH' })
    expect(created.body.status).toBe('NOT_READY')

    const allowlisted = await until('ALLOWLISTED', async () => {
      const w = await call('GET', `/v0/platform/wallets/${address}`)
      return w.body.status === 'ALLOWLISTED' ? w.body : undefined
    })
    expect(allowlisted).toMatchObject({ allowlisted: true, on_platform: true })
    const isAllowed = await chain().readContract({
      address: devnet.contracts.allowlist as Address,
      abi: allowlistAbi,
      functionName: 'isAllowed',
      args: [address, PERMISSION.DEPOSIT | PERMISSION.REDEEM],
    })
    expect(isAllowed).toBe(true)
    expect(await deposit(address)).toBe('success')
    const shares = await chain().readContract({
      address: river(),
      abi: riverAbi,
      functionName: 'balanceOf',
      args: [address],
    })
    expect(shares).toBeGreaterThan(0n)

    await call('PATCH', '/v0/platform/accounts/custody-1/pause')
    await until('permissions removed on chain', async () => {
      const w = await call('GET', `/v0/platform/wallets/${address}`)
      return w.body.allowlisted === false && w.body.status === 'PAUSED'
    })
    expect(await deposit(address)).toBe('reverted')

    await call('PATCH', '/v0/platform/accounts/custody-1/reactivate')
    await until('ALLOWLISTED again', async () => {
      const w = await call('GET', `/v0/platform/wallets/${address}`)
      return w.body.status === 'ALLOWLISTED'
    })
    expect(await deposit(address)).toBe('success')

    await call('PATCH', `/v0/platform/accounts/custody-1/wallets/${address}/remove`)
    const removed = await until('REMOVED', async () => {
      const w = await call('GET', `/v0/platform/wallets/${address}`)
      return w.body.status === 'REMOVED' ? w.body : undefined
    })
    expect(removed).toMatchObject({ allowlisted: false, on_platform: false })
    expect(await deposit(address)).toBe('reverted')
  })

  test('behavior: a target fee rate above the gross fee rate ingested from the chain is refused', async () => {
    const org = await orgWithToken(api)
    const call = http(api.url, org.token)
    await call('POST', '/v0/platform/accounts', { key: 'discounted' })
    await until(
      'the global fee ingested',
      async () => (await createRepos(api.dbh.db).chain.latestGlobalFeeBps()) === 1500,
    )
    const above = await call('POST', '/v0/platform/accounts/discounted/discount_rate', {
      target_fee_rate: 0.16,
    })
    expect([above.status, above.body.status]).toEqual([400, 'IR3200'])
    expect(above.body.message).toMatch(/0\.15/)
    const at = await call('POST', '/v0/platform/accounts/discounted/discount_rate', {
      target_fee_rate: '0.15',
    })
    expect([at.status, at.body.target_fee_rate]).toEqual([200, '0.15'])
  })

  test('behavior: a DENY bit on chain puts the wallet and its account in DENIED', async () => {
    const org = await orgWithToken(api)
    const call = http(api.url, org.token)
    const address = await newFundedAddress()
    const other = await newFundedAddress()
    await call('POST', '/v0/platform/accounts', { key: 'to-deny' })
    await call('POST', '/v0/platform/accounts/to-deny/wallets', { address, type: 'ETH' })
    await call('POST', '/v0/platform/accounts/to-deny/wallets', { address: other, type: 'ETH' })
    await until(
      'ALLOWLISTED',
      async () => (await call('GET', `/v0/platform/wallets/${address}`)).body.status === 'ALLOWLISTED',
    )
    expect(await denyOnChain(devnet, address)).toBe('success')
    const account = await until('account DENIED', async () => {
      const a = await call('GET', '/v0/platform/accounts/to-deny')
      return a.body.status === 'DENIED' ? a.body : undefined
    })
    const byAddress = Object.fromEntries(
      account.wallets.map((w: { address: string; status: string }) => [w.address, w.status]),
    )
    expect(byAddress[address.toLowerCase()]).toBe('DENIED')
    expect(byAddress[other.toLowerCase()]).toBe('PAUSED')
    const reactivate = await call('PATCH', '/v0/platform/accounts/to-deny/reactivate')
    expect([reactivate.status, reactivate.body.status]).toEqual([400, 'IR3003'])
  })

  test('behavior: a change the Allowlist refuses is recorded as failed with the revert reason; the rest of the batch goes through', async () => {
    const org = await orgWithToken(api)
    const call = http(api.url, org.token)
    const denied = await newFundedAddress()
    const fine = await newFundedAddress()
    expect(await denyOnChain(devnet, denied)).toBe('success')
    // the deny is ingested before the wallet exists: the wallet is not flipped by the follower, the
    // allowlist job meets the revert
    const repos = createRepos(api.dbh.db)
    await until('deny ingested', async () =>
      (await repos.chain.latestPermissions(devnet.chainId, [denied.toLowerCase()])).has(denied.toLowerCase()),
    )
    await call('POST', '/v0/platform/accounts', { key: 'mixed' })
    const a = await call('POST', '/v0/platform/accounts/mixed/wallets', { address: denied, type: 'ETH' })
    const b = await call('POST', '/v0/platform/accounts/mixed/wallets', { address: fine, type: 'ETH' })
    const failed = await until('revert recorded', async () => {
      const w = await call('GET', `/v0/platform/wallets/${a.body.id}`)
      return w.body.status_reason ? w.body : undefined
    })
    expect(failed.status_reason).toMatch(/reverted/)
    expect(failed.allowlisted).toBe(false)
    const changes = await repos.allowlistChanges.forWallet(a.body.id)
    expect(changes.at(-1)).toMatchObject({ state: 'failed' })
    expect(changes.at(-1)?.error).toBeTruthy()
    await until(
      'other wallet ALLOWLISTED',
      async () => (await call('GET', `/v0/platform/wallets/${b.body.id}`)).body.status === 'ALLOWLISTED',
    )
  })
})
