import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, test } from 'vitest'
import { cli, cliFails, deploymentEnv, spawnCli } from './helpers/cli.ts'
import { copiesOf, instructionsOf, readDockerfile } from './helpers/dockerfile.ts'
import { freePort } from './helpers/free-port.ts'
import { createTestDatabase, postgresAvailable, REDIS_URL, redisAvailable } from './helpers/services.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const run = promisify(execFile)
const ready = (await postgresAvailable()) && (await redisAvailable())
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

/**
 * Lays out in `root` what the Dockerfile's runtime stage holds, instruction by instruction: its COPYs from the
 * build context, the build stage's dist/ (made here as the build stage makes it: tools/bundle.mjs, from this
 * tree's sources), then its `npm ci` (production dependencies only). Returns the install's output.
 */
async function assembleRuntime(root: string): Promise<string> {
  const runtime = readDockerfile().at(-1)!
  for (const copy of copiesOf(runtime)) {
    const dest = path.join(root, copy.dest)
    if (copy.from === 'build') {
      expect(copy.sources).toEqual(['/app/dist/'])
      await run(process.execPath, [path.join(ROOT, 'tools', 'bundle.mjs'), dest], { cwd: ROOT })
      continue
    }
    expect(copy.from, 'a COPY from a stage other than build').toBeUndefined()
    for (const source of copy.sources) {
      const target = copy.dest.endsWith('/') ? path.join(dest, path.basename(source)) : dest
      await fs.cp(path.join(ROOT, source), target, { recursive: true })
    }
  }
  // the stage's install as written, from this machine's npm cache first (what follows `&&` cleans the image's
  // npm cache: not this machine's)
  const [install] = instructionsOf(runtime, 'RUN').filter((r) => r.startsWith('npm ci'))
  const npmCi = install!.split('&&')[0]!.trim()
  expect(npmCi).toContain('--omit=dev')
  const { stdout, stderr } = await run('sh', ['-c', `${npmCi} --prefer-offline`], {
    cwd: root,
    timeout: 150_000,
  })
  return stdout + stderr
}

describe('a production install: the image runtime stage files, `npm ci --omit=dev`, no dev dependency', () => {
  test.runIf(ready)(
    'behavior: migrate, api and worker run from dist/ on Postgres and Redis; the embedded database and devnet are refused naming what to set',
    async () => {
      const root = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-prod-install-'))
      cleanups.push(() => fs.rm(root, { recursive: true, force: true }))
      const bin = path.join(root, 'bin', 'lsreport.mjs')
      // a chain to point the worker at: the devnet of this (development) install, started meanwhile
      const dataDir = path.join(root, 'data')
      await fs.mkdir(dataDir)
      const devnetFile = path.join(dataDir, 'devnet.json')
      const [devnet, install] = await Promise.all([
        spawnCli(
          ['devnet', '--days', '1', '--wallets', '10', '--day-interval', '0'],
          { DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
          async () => (await fs.stat(devnetFile).catch(() => undefined)) !== undefined,
        ),
        assembleRuntime(root),
      ])
      cleanups.push(devnet.stop)

      // no package only the dev dependencies need was installed (typescript, an optional peer of viem that npm
      // marks devOptional, does come along)
      const lock = JSON.parse(await fs.readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { dev?: boolean }>
      }
      const devOnly = Object.keys(lock.packages).filter((key) => lock.packages[key]!.dev === true)
      for (const tool of [
        '@electric-sql/pglite',
        '@foundry-rs/anvil',
        'solc',
        'esbuild',
        'tsx',
        'standardwebhooks',
      ])
        expect(devOnly).toContain(`node_modules/${tool}`)
      const present = []
      for (const key of devOnly) {
        if (await fs.stat(path.join(root, key)).catch(() => undefined)) present.push(key)
      }
      expect(present, install).toEqual([])

      const info = JSON.parse(await fs.readFile(devnetFile, 'utf8')) as { rpc_url: string }
      const database = await createTestDatabase()
      cleanups.push(database.drop)
      const env = deploymentEnv({
        dataDir,
        databaseUrl: database.url,
        redisUrl: REDIS_URL,
        rpcUrl: info.rpc_url,
      })
      expect(await cli(['migrate'], env, bin)).toMatchObject({ backend: 'postgres' })

      const [apiPort, workerPort] = [await freePort(), await freePort()]
      const [api, worker] = await Promise.all([
        spawnCli(
          ['api'],
          { ...env, PORT: String(apiPort) },
          async () => (await fetch(`http://127.0.0.1:${apiPort}/health`)).ok,
          60_000,
          bin,
        ),
        spawnCli(
          ['worker'],
          { ...env, WORKER_PORT: String(workerPort) },
          async () => (await fetch(`http://127.0.0.1:${workerPort}/health`)).ok,
          60_000,
          bin,
        ),
      ])
      cleanups.push(api.stop, worker.stop)
      // ready: the database reachable and every migration applied (by `migrate` above)
      expect((await fetch(`http://127.0.0.1:${apiPort}/ready`)).status).toBe(200)

      expect(await (await fetch(`http://127.0.0.1:${workerPort}/health`)).json()).toMatchObject({
        status: 'ok',
      })

      // the embedded paths need dev dependencies: refused with what to set instead
      const embedded = await cliFails(['migrate'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, bin)
      expect(embedded.code).toBe(1)
      expect(embedded.stderr).toMatch(
        /^lsreport: the embedded database \(no DATABASE_URL\) needs the dev dependency @electric-sql\/pglite, .*set DATABASE_URL/m,
      )
      const local = await cliFails(
        ['up'],
        { ...env, RPC_URL: '', CHAIN: '', PORT: String(await freePort()) },
        bin,
      )
      expect(local.code).toBe(1)
      expect(local.stderr).toMatch(
        /^lsreport: the local devnet \(no RPC_URL\) needs the dev dependency @foundry-rs\/anvil, .*set RPC_URL/m,
      )
    },
    // npm ci takes 10 s on an idle machine, several times that on a busy one
    180_000,
  )
})
