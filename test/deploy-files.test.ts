import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
// Docker Compose files are YAML 1.1 with merge keys (`<<: *lsreport`): parsed with `merge: true`
import { parse } from 'yaml'
import { createJobWatch } from '../jobs/job-watch.ts'
import { serveWorkerHealth, type WorkerHealthServer } from '../jobs/worker-health.ts'
import { createWorkerMetrics } from '../metrics/index.ts'
import { startTestApi, type TestApi } from './helpers/api.ts'
import { cliText } from './helpers/cli.ts'
import { copiesOf, execForm, instructionsOf, readDockerfile } from './helpers/dockerfile.ts'
import { freePort } from './helpers/free-port.ts'
import { postgresAvailable } from './helpers/services.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8')
const run = promisify(execFile)

interface Service {
  image?: string
  build?: string
  command?: string[]
  env_file?: string | string[]
  environment?: Record<string, string> | string[]
  restart?: string
  healthcheck?: { test: string[] }
  depends_on?: Record<string, { condition: string }>
  ports?: string[]
}
const composeText = read('docker-compose.yml')
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service> }
/** The services run from this repository's image (migrate, api, worker). */
const ours = Object.entries(compose.services).filter(([, s]) => s.build === '.')

const stages = readDockerfile()
const runtime = stages.at(-1)!

/** A service's environment as a map (Compose takes a map or a `NAME=value` list). */
function environmentOf(service: Service): Record<string, string> {
  const env = service.environment ?? {}
  if (!Array.isArray(env)) return env
  return Object.fromEntries(env.map((line) => [line.split('=')[0]!, line.split('=').slice(1).join('=')]))
}

/** Names that hold secrets. */
const SECRET_NAME = /PASSWORD|SECRET|TOKEN|PRIVATE_KEY|_KEY$/
/** A value taken from the environment (`${NAME}`, `${NAME:?message}`, `${NAME:-}`), never written out. */
const INTERPOLATED = /^\$\{[A-Z_][A-Z0-9_]*(:?[-?][^}]*)?\}$/

/**
 * Secret literals of a Compose file: a secret-named variable with a written value, a URL with a written password,
 * and, anywhere in the text, a 32-byte hex key, a PEM private key or a `password=`.
 */
function composeSecretLiterals(text: string): string[] {
  const doc = parse(text, { merge: true }) as { services?: Record<string, Service> }
  const found: string[] = []
  for (const [name, service] of Object.entries(doc.services ?? {})) {
    for (const [key, value] of Object.entries(environmentOf(service))) {
      const written = String(value ?? '')
      if (SECRET_NAME.test(key) && written !== '' && !INTERPOLATED.test(written))
        found.push(`${name}: ${key} is written in the file`)
      const password = /^[a-z][a-z0-9+.-]*:\/\/[^:/@\s]+:([^@]+)@/i.exec(written)?.[1]
      if (password !== undefined && !INTERPOLATED.test(password))
        found.push(`${name}: ${key} holds a URL with a written password`)
    }
  }
  if (/0x[0-9a-fA-F]{64}/.test(text)) found.push('a 32-byte hex key')
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) found.push('a PEM private key')
  if (/password=/i.test(text)) found.push('password=')
  return found
}

/** `NAME=value` lines of an env file whose name holds a secret and whose value is not empty. */
function envFileSecrets(text: string): string[] {
  return text
    .split('\n')
    .map((line) => /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null && SECRET_NAME.test(m[1]!) && m[2]!.trim() !== '')
    .map((m) => m[1]!)
}

/** Runs a healthcheck's `node -e <script>` (as the container would); its exit code. */
async function healthcheckExit(script: string, env: Record<string, string> = {}): Promise<number> {
  try {
    await run(process.execPath, ['-e', script], {
      env: { PATH: process.env.PATH ?? '', ...env },
      timeout: 20_000,
    })
    return 0
  } catch (err) {
    return (err as { code: number }).code
  }
}

describe('the deploy secret checks', () => {
  test('behavior: a planted password, URL password, hex key or PEM is found; interpolated values are not', () => {
    // Compose interpolation, as in docker-compose.yml
    const interpolated = `      METRICS_TOKEN: $\{METRICS_TOKEN:-}\n      DATABASE_URL: postgres://app:$\{DB_PASS:?x}@db/app`
    const planted = [
      'services:',
      '  db:',
      '    environment:',
      '      POSTGRES_PASSWORD: hunter2',
      '      DATABASE_URL: postgres://app:hunter2@db:5432/app',
      `      ALLOWER_PRIVATE_KEY: "0x${'ab'.repeat(32)}"`,
      '      JWT_PRIVATE_KEY: "-----BEGIN PRIVATE KEY-----"',
      '  ok:',
      '    environment:',
      interpolated,
    ].join('\n')
    expect(composeSecretLiterals(planted)).toEqual([
      'db: POSTGRES_PASSWORD is written in the file',
      'db: DATABASE_URL holds a URL with a written password',
      'db: ALLOWER_PRIVATE_KEY is written in the file',
      'db: JWT_PRIVATE_KEY is written in the file',
      'a 32-byte hex key',
      'a PEM private key',
    ])
    expect(envFileSecrets('POSTGRES_PASSWORD=hunter2\nSIGNING_KEY_SECRET=\nRPC_URL=http://x\n')).toEqual([
      'POSTGRES_PASSWORD',
    ])
  })
})

describe('docker-compose.yml', () => {
  test('behavior: every command the services and the image run is a command of the CLI', async () => {
    const help = await cliText(['--help'], {})
    const commands = new Set(
      help
        .slice(help.indexOf('Commands:'))
        .split('\n')
        .map((line) => /^ {2}([a-z][a-z-]*)/.exec(line)?.[1])
        .filter((c) => c !== undefined),
    )
    expect(commands.size).toBeGreaterThan(5)
    expect(ours.map(([name]) => name).sort()).toEqual(['api', 'migrate', 'worker'])
    for (const [name, service] of ours) expect(commands, name).toContain(service.command?.[0])
    expect(commands).toContain(execForm(instructionsOf(runtime, 'CMD')[0]!)[0])
    expect(execForm(instructionsOf(runtime, 'ENTRYPOINT')[0]!)).toEqual(['node', 'bin/lsreport.mjs'])
  })

  test('behavior: api and worker restart unless stopped and start after the one-shot migrate succeeded', () => {
    const { api, worker, migrate } = compose.services
    for (const service of [api!, worker!]) {
      expect(service.restart).toBe('unless-stopped')
      expect(service.depends_on?.migrate).toEqual({ condition: 'service_completed_successfully' })
      expect(service.healthcheck?.test.slice(0, 3)).toEqual(['CMD', 'node', '-e'])
    }
    expect(migrate!.command).toEqual(['migrate'])
    expect(migrate!.restart).toBe('no')
    // each healthcheck asks the port its service listens on
    expect(api!.healthcheck!.test[3]).toContain(`127.0.0.1:${environmentOf(api!).PORT}/health`)
    expect(api!.ports).toContain(`${environmentOf(api!).PORT}:${environmentOf(api!).PORT}`)
    expect(environmentOf(worker!).WORKER_PORT).toMatch(/^\d+$/)
    expect(worker!.healthcheck!.test[3]).toContain(`127.0.0.1:${environmentOf(worker!).WORKER_PORT}/health`)
  })

  test('behavior: settings and secrets come from .env, which git and docker ignore; nothing secret is written', () => {
    for (const [name, service] of ours) expect(service.env_file, name).toBe('.env')
    expect(composeSecretLiterals(composeText)).toEqual([])
    const example = read('.env.example')
    expect(envFileSecrets(example)).toEqual([])
    for (const name of ['POSTGRES_PASSWORD', 'RPC_URL', 'SIGNING_KEY_SECRET'])
      expect(example).toMatch(new RegExp(`^${name}=$`, 'm'))
    expect(read('.gitignore').split('\n')).toContain('.env')
    expect(read('.dockerignore').split('\n')).toContain('.env')
    // every variable of .env.example is one the service reads, or the Postgres password compose passes on
    const config = read('common/config.ts')
    const names = [...example.matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]!)
    for (const name of names.filter((n) => n !== 'POSTGRES_PASSWORD'))
      expect(config, `${name} in .env.example`).toMatch(new RegExp(`['.]${name}\\b`))
  })
})

describe('Dockerfile', () => {
  test('behavior: a build stage bundles the CLI; the runtime stage installs production dependencies only and takes dist/ from it', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2)
    const build = stages.find((s) => s.name === 'build')!
    expect(instructionsOf(build, 'RUN')).toContain('npm run build')
    expect(JSON.parse(read('package.json')).scripts.build).toBe('node tools/bundle.mjs')
    const installs = instructionsOf(runtime, 'RUN').filter((r) => r.includes('npm ci'))
    expect(installs).toHaveLength(1)
    expect(installs[0]).toContain('--omit=dev')
    expect(copiesOf(runtime)).toContainEqual({ from: 'build', sources: ['/app/dist/'], dest: 'dist/' })
    // nothing of the build context but what the runtime needs: no sources, no node_modules
    for (const copy of copiesOf(runtime).filter((c) => c.from === undefined))
      for (const source of copy.sources) expect(fs.existsSync(path.join(ROOT, source)), source).toBe(true)
    expect(copiesOf(runtime).flatMap((c) => c.sources)).not.toContain('.')
  })

  test('behavior: the runtime runs as a user other than root, who owns DATA_DIR', () => {
    const [user] = instructionsOf(runtime, 'USER')
    expect(user).toBeDefined()
    expect(['root', '0', '0:0']).not.toContain(user)
    const dataDir = /DATA_DIR=(\S+)/.exec(instructionsOf(runtime, 'ENV').join(' '))?.[1]
    expect(dataDir).toBe('/data')
    const userAt = runtime.instructions.findIndex((i) => i.op === 'USER')
    const chownAt = runtime.instructions.findIndex(
      (i) => i.op === 'RUN' && i.args.includes(`chown ${user}`) && i.args.includes(dataDir!),
    )
    expect(chownAt).toBeGreaterThan(-1)
    expect(chownAt).toBeLessThan(userAt)
    expect(instructionsOf(runtime, 'ENV').join(' ')).not.toMatch(SECRET_NAME)
  })
})

describe.runIf(await postgresAvailable())('healthchecks against the real servers', () => {
  let api: TestApi
  let worker: WorkerHealthServer
  let workerPort: number
  beforeAll(async () => {
    api = await startTestApi('postgres')
    workerPort = await freePort()
    const watch = createJobWatch({ stuckAfterMs: 60_000 })
    const metrics = createWorkerMetrics(() => ({ inFlight: 0, stuck: 0, longestIdleSeconds: 0 }))
    worker = await serveWorkerHealth({
      host: '127.0.0.1',
      port: workerPort,
      watch,
      metrics,
      metricsToken: undefined,
    })
  })
  afterAll(async () => {
    await worker?.close()
    await api?.close()
  })

  test("behavior: the image's HEALTHCHECK (node, no curl) passes on the API's PORT and on a worker's WORKER_PORT, fails with nothing there", async () => {
    const [healthcheck] = instructionsOf(runtime, 'HEALTHCHECK')
    const command = execForm(healthcheck!)
    expect(command.slice(0, 2)).toEqual(['node', '-e'])
    const apiPort = new URL(api.url).port
    expect(await healthcheckExit(command[2]!, { PORT: apiPort })).toBe(0)
    expect(await healthcheckExit(command[2]!, { PORT: '1', WORKER_PORT: String(workerPort) })).toBe(0)
    expect(await healthcheckExit(command[2]!, { PORT: String(await freePort()) })).toBe(1)
  })

  test('behavior: the compose healthchecks ask routes the API and the worker serve', async () => {
    const { api: apiService, worker: workerService } = compose.services
    const apiScript = apiService!.healthcheck!.test[3]!.replace(
      `:${environmentOf(apiService!).PORT}/`,
      `:${new URL(api.url).port}/`,
    )
    expect(await healthcheckExit(apiScript)).toBe(0)
    const workerScript = workerService!.healthcheck!.test[3]!.replace(
      `:${environmentOf(workerService!).WORKER_PORT}/`,
      `:${workerPort}/`,
    )
    expect(await healthcheckExit(workerScript)).toBe(0)
    // the same scripts on a path neither serves fail
    expect(await healthcheckExit(apiScript.replace('/health', '/healthz'))).toBe(1)
    expect(await healthcheckExit(workerScript.replace('/health', '/healthz'))).toBe(1)
  })
})
