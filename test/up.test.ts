import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, test } from 'vitest'
import { clientToken, freePort, http } from './helpers/api.ts'
import { cli, spawnCli } from './helpers/cli.ts'

const run = promisify(execFile)
const README = path.resolve(import.meta.dirname, '../README.md')

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

async function waitForOutput(output: () => string, text: string, timeoutMs = 240_000) {
  const deadline = Date.now() + timeoutMs
  while (!output().includes(text)) {
    if (Date.now() > deadline) throw new Error(`no "${text}" after ${timeoutMs} ms:\n${output()}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** Runs a shell snippet as a user would paste it, from `cwd`; returns its stdout. */
async function shell(script: string, cwd: string): Promise<string> {
  const { stdout } = await run('bash', ['-eo', 'pipefail', '-c', script], { cwd, timeout: 60_000 })
  return stdout
}

/** The first ```sh block after a README heading. */
async function readmeBlock(heading: string): Promise<string> {
  const text = await fs.readFile(README, 'utf8')
  const section = text.slice(text.indexOf(`\n${heading}\n`))
  const block = /```sh\n([\s\S]*?)```/.exec(section)
  if (!block?.[1]) throw new Error(`no sh block under ${heading}`)
  return block[1]
}

/** Every `"name": "<decimal>"` of a JSON output. */
function amounts(output: string, name: string): number[] {
  return [...output.matchAll(new RegExp(`"${name}": "([0-9.]+)"`, 'g'))].map((m) => Number(m[1]))
}

describe('lsreport up (embedded default)', () => {
  test('behavior: brings up PGlite, the devnet, the jobs and the API; the demo account holds rewarded devnet wallets; the banner and the README examples work as written; a restart keeps everything', async () => {
    // DATA_DIR is ./data of the directory the user works in, as with a plain `npm start`
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-up-'))
    cleanups.push(() => fs.rm(home, { recursive: true, force: true }))
    const dataDir = path.join(home, 'data')
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const env = { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' }
    const health = async () => (await fetch(`${base}/health`)).status === 200
    const first = await spawnCli(['up'], env, health, 120_000)
    cleanups.push(first.stop)
    // every phase says so on its own line, then the banner once the history's days are computed
    await waitForOutput(first.output, 'lsreport is up')
    for (const phase of ['database', 'api', 'devnet', 'demo', 'history', 'days', 'live']) {
      expect(first.output()).toMatch(new RegExp(`^lsreport up: ${phase} +\\S.*\\(\\d+\\.\\d s\\)$`, 'm'))
    }
    expect(first.output()).toMatch(/lsreport up: database +PGlite in .* \(new, from the template\)/)
    expect(first.output()).toMatch(/follower caught up: 9\d reports ingested, 9\d days computed/)

    const demoFile = path.join(dataDir, 'demo-client.json')
    const demo = JSON.parse(await fs.readFile(demoFile, 'utf8'))
    expect(first.output()).toContain(demoFile)
    expect(demo).toMatchObject({ token_url: `${base}/oauth/token`, audience: base, account: { key: 'demo' } })
    expect(demo.account.wallets).toHaveLength(3)

    // the banner's lines, pasted as they are (the secret is read from the file)
    const banner = first.output().slice(first.output().indexOf('lsreport is up'))
    const pasted = banner
      .split('\n')
      .filter((line) => line.startsWith('  '))
      .map((line) => line.slice(2))
      .join('\n')
    expect(pasted).toContain(`"audience\\":\\"${base}\\"`)
    const fromBanner = await shell(pasted.replaceAll(demoFile, 'data/demo-client.json'), home)
    expect(fromBanner.match(/"status": "ALLOWLISTED"/g)).toHaveLength(3)
    expect(Math.max(...amounts(fromBanner, 'rewards_eth'))).toBeGreaterThan(0)
    expect(Math.max(...amounts(fromBanner, 'total_rewards_eth'))).toBeGreaterThan(0)

    // README "For platforms", as written (only the port differs)
    const script = (await readmeBlock('## For platforms')).replaceAll('http://127.0.0.1:8080', base)
    const out = await shell(script, home)
    expect(out.match(/"status": "ALLOWLISTED"/g)).toHaveLength(3)
    expect(Math.min(...amounts(out, 'total_rewards_eth'))).toBeGreaterThan(0) // wallet and account
    expect(Math.max(...amounts(out, 'rewards_eth'))).toBeGreaterThan(0) // one date's record
    expect(Math.max(...amounts(out, 'balance_lseth'))).toBeGreaterThan(0)
    expect(out).toMatch(/"key": "customer-1"/)
    expect(out).toMatch(/"status": "NOT_READY"/)
    // the new wallet, as created and as its status URL (GET /v0/platform/wallets/{address}) answers it
    expect(out.match(/"address": "0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549"/gi)).toHaveLength(2)
    const csv = await fs.readFile(path.join(home, 'demo-account.csv'), 'utf8')
    expect(csv.split('\r\n').length).toBeGreaterThan(90) // a header, then wallet-days
    expect(csv.split('\r\n')[0]).toContain('rewards_eth')
    const wallet = demo.account.wallets[0].toLowerCase()
    const redeems = await (
      await fetch(`${base}/eth/v1/redeems?owner=${demo.account.wallets.join(',')}`)
    ).json()
    expect((redeems as unknown[]).length).toBeGreaterThan(0)

    const call = http(base, await clientToken(base, demo))
    const summary = await call(
      'GET',
      `/eth/v1/rewards/wallets/${wallet}/summary?from=2026-04-01&to=2026-06-30`,
    )
    expect(summary.status).toBe(200)
    // registered before the history: attributed to the demo account from the first report on
    expect(summary.body.days[0]).toMatchObject({ date: '2026-04-01', account_id: expect.any(String) })

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
    // its anvil keeps the state of the latest blocks only (bounded memory), and the history was paced by the
    // follower, which read every report: a read at an early block is refused, one at the head answers
    const balanceAt = async (block: string) =>
      (await (
        await fetch(devnetInfo.rpc_url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'eth_getBalance',
            params: [devnetInfo.contracts.river, block],
          }),
        })
      ).json()) as { result?: string; error?: { message: string } }
    expect((await balanceAt('0x1')).error?.message).toMatch(/BlockOutOfRange/)
    expect((await balanceAt('latest')).result).toMatch(/^0x/)
    // a restatement while `up` holds the embedded database: the CLI acts through the running service (its
    // operator client in the data directory); unchanged records publish no version
    const versionsBefore = await call('GET', '/v1/reports/2026-04-02/versions')
    expect(versionsBefore.status).toBe(200)
    const recomputed = await cli<{ days: number; computed: number }>(
      ['backfill', '--from', '2026-04-01', '--to', '2026-04-03', '--recompute', '--reason', 'discount'],
      env,
    )
    expect(recomputed).toMatchObject({ days: 3, computed: 3 })
    expect((await call('GET', '/v1/reports/2026-04-02/versions')).body).toEqual(versionsBefore.body)
    const address = '0x00000000000000000000000000000000000a11ce'
    const added = await call('POST', '/v0/platform/accounts/demo-user/wallets', { address, type: 'ETH' })
    expect([added.status, added.body.status]).toEqual([200, 'NOT_READY'])
    await waitForStatus(call, address, 'ALLOWLISTED')
    await first.stop()

    const second = await spawnCli(['up'], env, health, 120_000)
    cleanups.push(second.stop)
    await waitForOutput(second.output, 'lsreport up: demo')
    expect(second.output()).toMatch(/lsreport up: database +PGlite in \S+; 0 migration\(s\) applied/)
    const again = JSON.parse(await fs.readFile(demoFile, 'utf8'))
    expect(again.client_id).toBe(demo.client_id)
    expect(again.account).toEqual(demo.account)
    const token2 = await http(base)('POST', '/oauth/token', {
      grant_type: 'client_credentials',
      audience: base,
      client_id: again.client_id,
      client_secret: again.client_secret,
    })
    const call2 = http(base, token2.body.access_token)
    const list = await call2('GET', '/v0/platform/accounts')
    expect(list.body.map((a: { key: string }) => a.key).sort()).toEqual(['customer-1', 'demo', 'demo-user'])
    // the devnet chain was resumed (test/up-restart.test.ts): the wallet allowlisted before the stop stays so
    await waitForStatus(call2, '0x00000000000000000000000000000000000a11ce', 'ALLOWLISTED')
  })
})
