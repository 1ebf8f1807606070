import { type ChildProcess, execFile, spawn } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'

const BIN = path.resolve(import.meta.dirname, '../../bin/lsreport.mjs')
const run = promisify(execFile)

/** The parent's environment without what vitest/vite inject (BASE_URL=/ would be read as the service's). */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { BASE_URL: _b, MODE: _m, DEV: _d, PROD: _p, SSR: _s, ...rest } = process.env
  return { ...rest, ...env }
}

/** Runs `lsreport <args>` as a user would and parses its JSON stdout. */
export async function cli<T = unknown>(args: string[], env: Record<string, string>): Promise<T> {
  const { stdout } = await run(process.execPath, [BIN, ...args], {
    env: childEnv(env),
    timeout: 60_000,
  })
  return JSON.parse(stdout) as T
}

/** Runs `lsreport <args>` expecting failure; returns exit code and stderr. */
export async function cliFails(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, [BIN, ...args], { env: childEnv(env), timeout: 60_000 })
  } catch (err) {
    const e = err as { code: number; stderr: string }
    return { code: e.code, stderr: e.stderr }
  }
  throw new Error(`lsreport ${args.join(' ')} unexpectedly succeeded`)
}

/** Starts a long-running `lsreport <command>`, waits until `ready()` answers true. */
export async function spawnCli(
  args: string[],
  env: Record<string, string>,
  ready: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<{ child: ChildProcess; output: () => string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (c: Buffer) => {
    output += c.toString()
  })
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString()
  })
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill('SIGTERM')
    })
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`lsreport ${args.join(' ')} exited early:\n${output}`)
    if (await ready().catch(() => false)) return { child, output: () => output, stop }
    await new Promise((r) => setTimeout(r, 200))
  }
  await stop()
  throw new Error(`lsreport ${args.join(' ')} not ready after ${timeoutMs} ms:\n${output}`)
}
