import { type ChildProcess, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { isMissingPackage, MissingDevDependencyError } from '../common/dev-dependency.ts'

/** A running anvil node. */
export interface Anvil {
  rpcUrl: string
  port: number
  chainId: number
  /** the node's process id */
  pid: number | undefined
  /** Stops the node (SIGTERM, then SIGKILL after a grace period). */
  stop(): Promise<void>
  /**
   * Whether the node exited on its own after `stop()`'s SIGTERM (a node with `--dump-state` then wrote its
   * dump), false when it had to be killed.
   */
  exitedCleanly(): boolean
}

export interface AnvilOptions {
  /** Port to listen on; 0 (default) picks a free port. */
  port?: number
  chainId?: number
  /** Genesis block timestamp in seconds (lets a simulated history start in the past). */
  timestamp?: bigint
  /** Number of pre-funded dev accounts (default 10). */
  accounts?: number
  /** Extra arguments passed to anvil as they are. */
  args?: string[]
  /** Milliseconds to wait for "Listening on" (default 20000). */
  startTimeoutMs?: number
  /**
   * Milliseconds `stop()` waits after SIGTERM before SIGKILL (default 3000); longer for a node that dumps its
   * state on exit (`--dump-state`).
   */
  stopGraceMs?: number
}

/**
 * Path of the anvil binary shipped by the platform package of @foundry-rs/anvil (a dev dependency: a production
 * install throws `MissingDevDependencyError`, saying to set RPC_URL).
 */
export function anvilBinaryPath(): string {
  const require = createRequire(import.meta.url)
  const arch = process.arch === 'x64' ? 'amd64' : process.arch
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`
  let manifest: string
  try {
    manifest = require.resolve(`${pkg}/package.json`)
  } catch (err) {
    if (!isMissingPackage(err, '@foundry-rs/anvil')) throw err
    throw new MissingDevDependencyError(
      '@foundry-rs/anvil',
      'the local devnet (no RPC_URL)',
      'set RPC_URL to an Ethereum JSON-RPC endpoint (and CHAIN)',
      err,
    )
  }
  return path.join(path.dirname(manifest), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil')
}

/**
 * Spawns anvil on 127.0.0.1 and resolves once it listens.
 *
 * @example
 * const anvil = await startAnvil({ port: 0 })
 * // anvil.rpcUrl === 'http://127.0.0.1:40123'
 * await anvil.stop()
 */
export function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  const chainId = options.chainId ?? 31337
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(options.port ?? 0),
    '--chain-id',
    String(chainId),
    '--accounts',
    String(options.accounts ?? 10),
  ]
  if (options.timestamp !== undefined) args.push('--timestamp', options.timestamp.toString())
  args.push(...(options.args ?? []))
  const child: ChildProcess = spawn(anvilBinaryPath(), args, {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let clean = false
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(
        new Error(`anvil did not start within ${options.startTimeoutMs ?? 20_000} ms: ${output.slice(-500)}`),
      )
    }, options.startTimeoutMs ?? 20_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(output)
      if (!match) return
      clearTimeout(timer)
      child.stdout?.off('data', onData)
      child.stdout?.resume()
      const port = Number(match[1])
      resolve({
        rpcUrl: `http://127.0.0.1:${port}`,
        port,
        chainId,
        pid: child.pid,
        stop: async () => {
          clean = await stopChild(child, options.stopGraceMs ?? 3_000)
        },
        exitedCleanly: () => clean,
      })
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`anvil exited with code ${code}: ${output.slice(-500)}`))
    })
  })
}

function stopChild(child: ChildProcess, graceMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(false)
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs)
    kill.unref()
    child.once('exit', (_code, signal) => {
      clearTimeout(kill)
      resolve(signal !== 'SIGKILL')
    })
    child.kill('SIGTERM')
  })
}
