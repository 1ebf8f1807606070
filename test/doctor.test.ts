/**
 * `lsreport doctor` run as a process, as an operator runs it: against a devnet every check passes (exit 0);
 * a CHAIN that does not match the node's chain id fails first (exit 1, both ids named); a node that refuses
 * reads at past blocks (a JSON-RPC proxy answering like a pruned geth) fails the archive check with its
 * message.
 */
import { execFile } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { SHORT_VERSIONED_HISTORY, startTestDevnet, type TestDevnet } from './helpers/devnet.ts'

const BIN = path.resolve(import.meta.dirname, '../bin/lsreport.mjs')

/** The runner's own service variables are not passed on: the child sees only what a test sets. */
const SERVICE_VARS = [
  'DATABASE_URL',
  'REDIS_URL',
  'RPC_URL',
  'CHAIN',
  'DATA_DIR',
  'ALLOWER_PRIVATE_KEY',
  'BASE_URL',
]

/** Runs `lsreport doctor <args>`; resolves with its exit code and output whatever the code. */
function doctor(args: string[], env: Record<string, string>) {
  return lsreport(['doctor', ...args], env)
}

/** Runs `lsreport <args>`; resolves with its exit code and output whatever the code. */
function lsreport(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !SERVICE_VARS.includes(k)))
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...inherited, ...env }, timeout: 90_000 },
      (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? 1) : 0
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr })
      },
    )
  })
}

/** State reads (and calls) whose block parameter is a number: what a pruned node refuses. */
const BLOCK_PARAM: Record<string, number> = {
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getTransactionCount: 1,
  eth_call: 1,
  eth_getStorageAt: 2,
}

/**
 * A JSON-RPC proxy in front of a node that answers state reads at any block other than `latest` the way a
 * full (non-archive) geth does: `missing trie node`.
 */
async function startPrunedProxy(upstream: string): Promise<{ url: string; stop(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const calls = [JSON.parse(body)].flat() as { id: unknown; method: string; params?: unknown[] }[]
      const answers = await Promise.all(
        calls.map(async (call) => {
          const at = BLOCK_PARAM[call.method]
          const tag = at === undefined ? undefined : call.params?.[at]
          if (typeof tag === 'string' && tag.startsWith('0x')) {
            return {
              jsonrpc: '2.0',
              id: call.id,
              error: { code: -32000, message: `missing trie node ${'ab'.repeat(32)} (path ) <nil>` },
            }
          }
          const r = await fetch(upstream, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(call),
          })
          return r.json()
        }),
      )
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(Array.isArray(JSON.parse(body)) ? answers : answers[0]))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

describe('lsreport doctor', () => {
  let devnet: TestDevnet

  beforeAll(async () => {
    devnet = await startTestDevnet('doctor', {
      ...SHORT_VERSIONED_HISTORY, // proxies upgraded from 0.4.0 to 1.2.1: each mapped to its version
      days: 5,
      walletCount: 12,
      dayIntervalMs: 0,
      blockIntervalMs: 100,
    })
  }, 300_000)
  afterAll(async () => {
    await devnet?.stop()
  })

  test('behavior: against a devnet every check passes (exit 0), one line per check', async () => {
    const env = { RPC_URL: devnet.rpcUrl, CHAIN: 'devnet', DATA_DIR: devnet.dataDir }
    const run = await doctor([], env)
    expect(run.code, run.stdout + run.stderr).toBe(0)
    const lines = run.stdout.trim().split('\n')
    expect(lines[0]).toBe(`ok   chain id ${devnet.chainId} (devnet)`)
    expect(run.stdout).toMatch(/^ok {3}historical state readable \(block \d+, River's start block\)$/m)
    expect(run.stdout).toMatch(
      /^ok {3}contract code at river, redeemManager, allowlist, oracle, operatorsRegistry/m,
    )
    expect(run.stdout).toMatch(/^ok {3}start blocks river \d+/m)
    expect(run.stdout).toMatch(/^ok {3}latest oracle report at block \d+ \(20\d\d-\d\d-\d\d /m)
    expect(run.stdout).not.toMatch(/^FAIL/m)
    expect(lines.at(-1)).toMatch(/^doctor: all checks passed/)

    const json = await doctor(['--json'], env)
    expect(json.code).toBe(0)
    const results = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { check: string; status: string })
    expect(results.map((r) => r.check)).toEqual(
      expect.arrayContaining(['chain_id', 'archive', 'code', 'allower', 'start_blocks', 'latest_report']),
    )
    expect(results.every((r) => r.status !== 'fail')).toBe(true)
  }, 120_000)

  test('behavior: a CHAIN that does not match the node fails the first check, naming both chain ids', async () => {
    const run = await doctor([], { RPC_URL: devnet.rpcUrl, CHAIN: 'mainnet' })
    expect(run.code).toBe(1)
    const lines = run.stdout.trim().split('\n')
    expect(lines[0]).toBe(
      `FAIL chain id ${devnet.chainId} at RPC_URL, but CHAIN=mainnet is chain id 1: point RPC_URL at a mainnet node or set CHAIN to match`,
    )
    expect(lines.filter((l) => /^(ok|warn|FAIL) /.test(l))).toHaveLength(1) // stopped there
  }, 120_000)

  test('behavior: a node without historical state fails the archive check with the archive message', async () => {
    const proxy = await startPrunedProxy(devnet.rpcUrl)
    try {
      const run = await doctor(['--json'], { RPC_URL: proxy.url, CHAIN: 'devnet', DATA_DIR: devnet.dataDir })
      expect(run.code).toBe(1)
      const results = run.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { check: string; status: string; message: string })
      expect(results.map((r) => `${r.status} ${r.check}`)).toEqual(['ok chain_id', 'fail archive'])
      expect(results[1]!.message).toMatch(
        /^the node cannot read state at block \d+: reads at historical blocks need an archive node \(e\.g\. .*\); the node said: .*missing trie node/,
      )
    } finally {
      await proxy.stop()
    }
  }, 120_000)

  test('behavior: sync runs the same checks at start and refuses a node without historical state with the archive message', async () => {
    const proxy = await startPrunedProxy(devnet.rpcUrl)
    try {
      const run = await lsreport(['sync'], { RPC_URL: proxy.url, CHAIN: 'devnet', DATA_DIR: devnet.dataDir })
      expect(run.code).not.toBe(0)
      expect(run.stderr).toMatch(
        /chain check archive failed: the node cannot read state at block \d+: reads at historical blocks need an archive node/,
      )
      expect(run.stdout).not.toMatch(/synced_to/)
    } finally {
      await proxy.stop()
    }
  }, 120_000)

  test('behavior: a configuration error is the one failure (exit 1)', async () => {
    const run = await doctor([], { CHAIN: 'hoodi' })
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(/^FAIL RPC_URL is required when CHAIN is hoodi$/m)
  }, 60_000)
})
