import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createPublicClient, createWalletClient, defineChain, http, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { allowlistAbi, PERMISSION, riverAbi } from '../chain/abi.ts'
import { derivedAddress } from './accounts.ts'
import { type DevnetFile, type DevnetHandle, startDevnet } from './index.ts'
import { riverCall } from './testing.ts'

describe('startDevnet', () => {
  let devnet: DevnetHandle
  let dataDir: string
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'lsreport-devnet-'))
    devnet = await startDevnet({
      dataDir,
      days: 4,
      walletCount: 30,
      dayIntervalMs: 250,
      blockIntervalMs: 50,
      history: 'current', // the versioned default is tested in versions.test.ts
    })
  }, 30_000)
  afterAll(async () => {
    await devnet?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  test('behavior: writes devnet.json with the RPC URL, contracts, allower key and calendar', async () => {
    const file = JSON.parse(readFileSync(devnet.devnetFile, 'utf8')) as DevnetFile
    expect(file).toMatchObject({
      rpc_url: devnet.rpcUrl,
      chain_id: 31337,
      contracts: devnet.contracts,
      allower: { address: devnet.allowerAddress, private_key: devnet.allowerPrivateKey },
      firewall: devnet.firewall,
      history: 'current',
      simulator: { day_seconds: 86_400, first_report_date: '2026-04-01', report_time_utc: '12:00:00' },
      deploy_block: Number(devnet.deployBlock),
    })
    for (const contract of ['river', 'oracle', 'allowlist', 'redeemManager', 'operatorsRegistry'] as const) {
      expect(file.implementations[contract]).toEqual([
        {
          version: '1.2.1',
          address: devnet.implementations[contract][0]?.address,
          block: Number(devnet.deployBlock),
        },
      ])
    }
    expect(devnet.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const consensus = JSON.parse(readFileSync(devnet.consensusFile, 'utf8')) as { latest: { date: string } }
    expect(consensus.latest.date >= '2026-04-04').toBe(true)
  })

  test('behavior: the service allower writes the Allowlist through the firewall with its own key; the wallet can then deposit; days keep coming', async () => {
    const chain = defineChain({
      id: devnet.chainId,
      name: 'lsreport devnet',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [devnet.rpcUrl] } },
    })
    const publicClient = createPublicClient({ chain, transport: http(devnet.rpcUrl), pollingInterval: 50 })
    const writer = createWalletClient({
      account: privateKeyToAccount(devnet.allowerPrivateKey),
      chain,
      transport: http(devnet.rpcUrl),
    })
    const wallet = derivedAddress('index-test', 'wallet', 0)
    const hash = await writer.writeContract({
      address: devnet.firewall,
      abi: allowlistAbi,
      functionName: 'setAllowPermissions',
      args: [[wallet], [PERMISSION.DEPOSIT | PERMISSION.REDEEM]],
    })
    const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 10_000 })
    expect(receipt.status).toBe('success')
    expect(
      await publicClient.readContract({
        address: devnet.contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'isAllowed',
        args: [wallet, PERMISSION.DEPOSIT | PERMISSION.REDEEM],
      }),
    ).toBe(true)

    // the wallet deposits (sent through anvil impersonation, as a wallet app would sign it)
    await publicClient.request({
      method: 'anvil_setBalance',
      params: [wallet, '0x3635c9adc5dea00000'],
    } as never)
    const deposit = (await publicClient.request({
      method: 'eth_sendTransaction',
      params: [
        {
          from: wallet,
          to: devnet.contracts.river,
          data: riverCall.deposit(),
          value: `0x${parseEther('2').toString(16)}`,
        },
      ],
    } as never)) as `0x${string}`
    expect((await publicClient.waitForTransactionReceipt({ hash: deposit, timeout: 10_000 })).status).toBe(
      'success',
    )
    expect(
      await publicClient.readContract({
        address: devnet.contracts.river,
        abi: riverAbi,
        functionName: 'balanceOf',
        args: [wallet],
      }),
    ).toBeGreaterThan(0n)

    const day = devnet.simulator.state().day
    await expect
      .poll(() => devnet.simulator.state().day, { timeout: 10_000, interval: 50 })
      .toBeGreaterThan(day + 1)
    expect(devnet.simulator.state().error).toBeUndefined()
  })
})
