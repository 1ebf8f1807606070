import { type ChildProcess, spawn } from 'node:child_process'
import { Redis } from 'ioredis'
import { freePort } from './api.ts'

/** A private redis-server (no persistence) that a test may kill and start again on the same port. */
export interface PrivateRedis {
  url: string
  /** SIGKILLs the server: everything in it is lost (no persistence). */
  kill(): Promise<void>
  /** Starts it again on the same port. */
  start(): Promise<void>
  stop(): Promise<void>
}

async function waitForPing(url: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 500 })
    client.on('error', () => undefined) // refused while the server starts
    try {
      await client.connect()
      if ((await client.ping()) === 'PONG') return
    } catch {
      if (Date.now() > deadline) throw new Error(`redis at ${url} did not start`)
    } finally {
      client.disconnect()
    }
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Starts `redis-server` on a free port (the binary the machine has; see TOOLING.md). */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort()
  const url = `redis://127.0.0.1:${port}`
  let child: ChildProcess | undefined
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    )
    await waitForPing(url)
  }
  const kill = () =>
    new Promise<void>((resolve) => {
      const c = child
      if (!c || c.exitCode !== null) return resolve()
      c.once('exit', () => resolve())
      c.kill('SIGKILL')
    })
  await start()
  return { url, kill, start, stop: kill }
}
