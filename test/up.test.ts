import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { freePort, http } from './helpers/api.ts'
import { spawnCli } from './helpers/cli.ts'

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

async function waitForStatus(call: ReturnType<typeof http>, address: string, status: string) {
  const deadline = Date.now() + 60_000
  for (;;) {
    const w = await call('GET', `/v0/platform/wallets/${address}`)
    if (w.body.status === status) return w.body
    if (Date.now() > deadline) {
      const accounts = await call('GET', '/v0/platform/accounts')
      throw new Error(
        `wallet still ${JSON.stringify(w.body)}, expected ${status}; accounts: ${JSON.stringify(accounts.body)}`,
      )
    }
    await new Promise((r) => setTimeout(r, 250))
  }
}

describe('lsreport up (embedded default)', () => {
  test('behavior: brings up PGlite, the devnet, the jobs and the API; demo credentials work; a wallet gets ALLOWLISTED; a restart keeps everything', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-up-'))
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const env = { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' }
    const ready = async () => (await fetch(`${base}/ready`)).status === 200
    const first = await spawnCli(['up'], env, ready, 120_000)
    cleanups.push(first.stop)
    const demoFile = path.join(dataDir, 'demo-client.json')
    const demo = JSON.parse(await fs.readFile(demoFile, 'utf8'))
    expect(first.output()).toContain(demoFile)
    expect(demo).toMatchObject({ token_url: `${base}/oauth/token`, audience: base })
    const token = await http(base)('POST', '/oauth/token', {
      grant_type: 'client_credentials',
      audience: base,
      client_id: demo.client_id,
      client_secret: demo.client_secret,
    })
    expect(token.status).toBe(200)
    const call = http(base, token.body.access_token)
    const created = await call('POST', '/v0/platform/accounts', { key: 'demo-user' })
    expect(created.status).toBe(201)
    const devnetInfo = JSON.parse(await fs.readFile(path.join(dataDir, 'devnet.json'), 'utf8'))
    expect(devnetInfo).toMatchObject({
      rpc_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      chain_id: 31337,
      contracts: {
        river: expect.any(String),
        redeemManager: expect.any(String),
        allowlist: expect.any(String),
        oracle: expect.any(String),
      },
      simulator: { day_seconds: 86400, first_report_date: '2026-04-01' },
    })
    expect(first.output()).toContain(devnetInfo.rpc_url)
    const address = '0x00000000000000000000000000000000000a11ce'
    const wallet = await call('POST', '/v0/platform/accounts/demo-user/wallets', { address, type: 'ETH' })
    expect([wallet.status, wallet.body.status]).toEqual([200, 'NOT_READY'])
    await waitForStatus(call, address, 'ALLOWLISTED')
    await first.stop()

    const second = await spawnCli(['up'], env, ready, 120_000)
    cleanups.push(second.stop)
    const again = JSON.parse(await fs.readFile(demoFile, 'utf8'))
    expect(again.client_id).toBe(demo.client_id)
    const token2 = await http(base)('POST', '/oauth/token', {
      grant_type: 'client_credentials',
      audience: base,
      client_id: again.client_id,
      client_secret: again.client_secret,
    })
    const call2 = http(base, token2.body.access_token)
    const list = await call2('GET', '/v0/platform/accounts')
    expect(list.body.map((a: { key: string }) => a.key)).toEqual(['demo-user'])
    // a new devnet replaced the old chain: the follower rolled back what the new chain lacks and the
    // allowlist job sent the wallet's permissions again
    await waitForStatus(call2, '0x00000000000000000000000000000000000a11ce', 'ALLOWLISTED')
  })
})
