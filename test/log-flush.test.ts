import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, test } from 'vitest'
import { freePort } from './helpers/api.ts'
import { cliText, spawnCli } from './helpers/cli.ts'

const run = promisify(execFile)

/** The JSON lines of a log text. */
function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

// The logger writes in batches (common/logger.ts): what is logged before a shutdown or a crash is still written.
describe('logs at shutdown and at a crash', () => {
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  test('behavior: after SIGTERM, every request `lsreport api` answered has its access line, then the shutdown lines', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-log-flush-'))
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const env = { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' }
    await cliText(['migrate'], env)
    const server = await spawnCli(['api'], env, async () => (await fetch(`${base}/ready`)).status === 200)
    cleanups.push(server.stop)
    // a burst of requests (more lines than one batch), then SIGTERM as soon as the last one is answered
    const ids = Array.from({ length: 400 }, (_, i) => `flush-${i}`)
    const statuses = await Promise.all(
      ids.map(async (id) => (await fetch(`${base}/health`, { headers: { 'x-request-id': id } })).status),
    )
    expect(new Set(statuses)).toEqual(new Set([200]))
    await server.stop()
    expect(server.child.exitCode).toBe(0)

    const lines = jsonLines(server.stdout())
    const logged = new Set(lines.filter((l) => l.msg === 'request answered').map((l) => l.request_id))
    expect(ids.filter((id) => !logged.has(id))).toEqual([])
    expect(lines.at(-1)).toMatchObject({ msg: 'shutdown finished', reason: 'SIGTERM' })
  })

  test('behavior: a process that crashes on an uncaught exception has written every line it logged', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-log-crash-'))
    cleanups.push(() => fs.rm(dir, { recursive: true, force: true }))
    const file = path.join(dir, 'crash.log')
    const count = 20_000
    const helper = path.resolve(import.meta.dirname, 'helpers/log-crash.ts')
    const crashed = await run(process.execPath, ['--import', 'tsx', helper, file, String(count)]).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    )
    expect(crashed?.code).toBe(1)
    expect(crashed?.stderr).toContain('crashed on purpose')

    const lines = jsonLines(await fs.readFile(file, 'utf8'))
    expect(lines.map((l) => l.line)).toEqual(Array.from({ length: count }, (_, i) => i))
  })
})
