import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, test } from 'vitest'
import { openDb } from '../db/index.ts'
import { clientToken, freePort, http } from './helpers/api.ts'
import { cli, spawnCli } from './helpers/cli.ts'

const run = promisify(execFile)
const ROOT = path.resolve(import.meta.dirname, '..')
/** The day the test restates: the history's last (few later days to restate with it). */
const DAY = '2026-06-30'

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

async function waitForOutput(output: () => string, text: string, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs
  while (!output().includes(text)) {
    if (Date.now() > deadline) throw new Error(`no "${text}" after ${timeoutMs} ms:\n${output()}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** README.md's "Restatements" bash block, as written (its list indent removed). */
async function restatementBlock(): Promise<string> {
  const text = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8')
  const section = text.slice(text.indexOf('- **Restatements.**'))
  const block = /```bash\n([\s\S]*?) {2}```/.exec(section)?.[1]
  if (!block) throw new Error('no bash block under Restatements')
  return block.replace(/^ {2}/gm, '')
}

/** One JSON-RPC call to the devnet's node. */
async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const body = (await res.json()) as { result: T; error?: { message: string } }
  if (body.error) throw new Error(body.error.message)
  return body.result
}

interface DevnetInfo {
  rpc_url: string
  chain_id: number
  contracts: Record<string, unknown>
}

describe('lsreport up restarted (embedded default)', () => {
  test('behavior: the devnet chain, the report versions and as_of reads survive a restart; the README restatement example runs as written', async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-up-restart-'))
    cleanups.push(() => fs.rm(home, { recursive: true, force: true }))
    // `npx lsreport` in the README finds this repository's CLI, as in a clone
    await fs.mkdir(path.join(home, 'node_modules/.bin'), { recursive: true })
    await fs.symlink(path.join(ROOT, 'bin/lsreport.mjs'), path.join(home, 'node_modules/.bin/lsreport'))
    const dataDir = path.join(home, 'data')
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const env = { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' }
    const health = async () => (await fetch(`${base}/health`)).status === 200
    const readDevnet = async () =>
      JSON.parse(await fs.readFile(path.join(dataDir, 'devnet.json'), 'utf8')) as DevnetInfo
    const start = async () => {
      const up = await spawnCli(['up'], env, health, 120_000)
      cleanups.push(up.stop)
      await waitForOutput(up.output, 'lsreport is up')
      return up
    }
    const headOf = async (devnet: DevnetInfo) => BigInt(await rpc<string>(devnet.rpc_url, 'eth_blockNumber'))

    // 1. a new chain; an unchanged recompute through the running service publishes nothing
    const first = await start()
    expect(first.output()).toMatch(/lsreport up: devnet +anvil at \S+, contracts deployed/)
    const demo = JSON.parse(await fs.readFile(path.join(dataDir, 'demo-client.json'), 'utf8'))
    let call = http(base, await clientToken(base, demo))
    const devnet1 = await readDevnet()
    const versions1 = await call('GET', `/v1/reports/${DAY}/versions`)
    expect(versions1.body.versions.map((v: { reason: string }) => v.reason)).toEqual(['first'])
    await cli(['backfill', '--from', DAY, '--to', DAY, '--recompute', '--reason', 'discount'], env)
    expect((await call('GET', `/v1/reports/${DAY}/versions`)).body).toEqual(versions1.body)
    const head1 = await headOf(devnet1)
    await first.stop()
    // a graceful stop saved anvil's state and the simulator's beside it
    const saved = await fs.readdir(path.join(dataDir, 'devnet'))
    expect(saved.filter((f) => f.endsWith('.json')).sort()).toEqual(['anvil-state.json', 'simulator.json'])

    // an operator changes the demo account's discount from the day on (SQL: the API's registrations count
    // from the chain's next report, never for a finalized day)
    const dbh = await openDb({ pgliteDir: path.join(dataDir, 'pg') })
    const [account] = await dbh.db('accounts').where({ key: 'demo' }).select('id')
    await dbh.db('discount_rates').insert({
      account_id: account.id,
      target_fee_rate: '0.02',
      created_by: 'operator',
      effective_from: new Date(`${DAY}T00:00:00Z`),
    })
    await dbh.close()

    // 2. the same chain resumed: same id and contracts, its head kept, the follower goes on without a reorg
    const second = await start()
    const resumed = /lsreport up: devnet +anvil at \S+, chain resumed at block (\d+)/.exec(second.output())
    expect(resumed, second.output()).not.toBeNull()
    expect(BigInt(resumed?.[1] ?? 0)).toBeGreaterThanOrEqual(head1)
    const devnet2 = await readDevnet()
    expect([devnet2.chain_id, devnet2.contracts]).toEqual([devnet1.chain_id, devnet1.contracts])
    expect(second.output()).not.toMatch(/reorg detected/)
    expect(second.output()).not.toMatch(/simulator stopped after an error/)
    call = http(base, await clientToken(base, demo))
    let token = await clientToken(base, demo)
    /** A reporting read's status and bytes. */
    const bytes = async (url: string) => {
      const res = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${token}` } })
      return { status: res.status, text: await res.text() }
    }
    const read = `/eth/v1/rewards/accounts/demo/summary?from=${DAY}&to=${DAY}`
    const before = await bytes(read)
    expect(before.status, before.text).toBe(200)
    const beforeAt = new Date().toISOString()
    await new Promise((r) => setTimeout(r, 1_100)) // the README notes its instant to the second

    // the README's example as written: its recompute publishes the discount's version
    const { stdout } = await run('bash', ['-eo', 'pipefail', '-c', await restatementBlock()], {
      cwd: home,
      // a user's shell: BASE and TOKEN from the README's earlier blocks, the data directory ./data (none of the
      // runner's service variables: vite sets BASE_URL=/)
      env: { PATH: process.env.PATH, HOME: process.env.HOME, BASE: base, TOKEN: token },
      timeout: 120_000,
    })
    const lines = stdout.trim().split('\n')
    const versionLines = lines.filter((l) => l.startsWith('{"reason"'))
    expect(versionLines.map((l) => JSON.parse(l).reason)).toEqual(['first', 'first', 'discount'])
    // its as_of read, at the instant it noted before the recompute, answers the totals answered then
    expect(JSON.parse(lines[lines.length - 1] as string)).toEqual(JSON.parse(before.text).totals)
    const after = await bytes(read)
    expect(after.text).not.toBe(before.text)
    expect((await bytes(`${read}&as_of=${beforeAt}`)).text).toBe(before.text)
    const afterAt = new Date().toISOString()
    const versions2 = (await call('GET', `/v1/reports/${DAY}/versions`)).body
    expect(versions2.versions).toHaveLength(2)
    // a second recompute of unchanged records publishes nothing
    await cli(['backfill', '--from', DAY, '--to', DAY, '--recompute', '--reason', 'discount'], env)
    expect((await call('GET', `/v1/reports/${DAY}/versions`)).body).toEqual(versions2)
    const head2 = await headOf(devnet2)
    expect(head2).toBeGreaterThan(head1)
    await second.stop()

    // 3. restarted after the restatement: both versions, and each instant's bytes
    const third = await start()
    const again = /chain resumed at block (\d+)/.exec(third.output())
    expect(BigInt(again?.[1] ?? 0)).toBeGreaterThanOrEqual(head2)
    expect(third.output()).not.toMatch(/reorg detected/)
    token = await clientToken(base, demo)
    call = http(base, token)
    expect((await call('GET', `/v1/reports/${DAY}/versions`)).body).toEqual(versions2)
    expect(await bytes(`${read}&as_of=${beforeAt}`)).toEqual(before)
    expect(await bytes(`${read}&as_of=${afterAt}`)).toEqual(after)
    expect((await readDevnet()).chain_id).toBe(devnet1.chain_id)
    expect(await headOf(await readDevnet())).toBeGreaterThanOrEqual(head2)
    await third.stop()
  }, 900_000)
})
