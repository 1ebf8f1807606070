import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import createClient from 'openapi-fetch'
import ts from 'typescript'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { documentText, openApiDocument } from '../cli/openapi.ts'
import {
  bearerAuth,
  clientCredentialsTokens,
  createLsReportClient,
  type paths,
  TokenRequestError,
  type TokenSource,
} from '../clients/typescript/src/index.ts'
import { initialHolders } from '../devnet/index.ts'
import { CLIENT_DIR, clientFiles } from '../tools/client-files.ts'
import { clientToken, freePort, http } from './helpers/api.ts'
import { cli, cliOrgClient, cliText, spawnCli, TEST_SIGNING_KEY_SECRET } from './helpers/cli.ts'
import { startTestDevnet, type TestDevnet } from './helpers/devnet.ts'
import { createTestDatabase, postgresAvailable } from './helpers/services.ts'

/**
 * The typed client (clients/typescript, issue 25): its generated files are what the API's document makes now,
 * the document is what a running API serves, its types refuse calls the document does not allow, and its
 * example onboards a devnet wallet and prints the rewards the API answers for it.
 */

const ROOT = path.resolve(import.meta.dirname, '..')
const EXAMPLE = path.join(ROOT, CLIENT_DIR, 'examples/onboard-and-read.ts')
const TYPES_CHECK = path.join(ROOT, 'test/typed-client-types.ts')
const run = promisify(execFile)
const pgOk = await postgresAvailable()

/** The first line where two texts differ, for a short failure message (the files are ~1 MB). */
function firstDifference(expected: string, actual: string): string {
  const a = expected.split('\n')
  const b = actual.split('\n')
  const line = a.findIndex((text, i) => text !== b[i])
  const at = line < 0 ? a.length : line
  return `line ${at + 1}: expected ${JSON.stringify(a[at]?.slice(0, 120))}, committed ${JSON.stringify(b[at]?.slice(0, 120))}`
}

describe('typed client: generated files', () => {
  test('behavior: openapi.json and src/schema.d.ts are what the current document generates (else: npm run client:generate)', async () => {
    const files = await clientFiles(await openApiDocument({}))
    expect(Object.keys(files).sort()).toEqual(['openapi.json', 'src/schema.d.ts'])
    expect(files['src/schema.d.ts']).toContain('export interface paths')
    for (const [name, expected] of Object.entries(files)) {
      const file = path.join(CLIENT_DIR, name)
      const committed = await fs.readFile(path.join(ROOT, file), 'utf8').catch(() => '')
      const stale =
        committed === expected
          ? ''
          : `${file} is stale: run \`npm run client:generate\` (${firstDifference(expected, committed)})`
      expect(stale, stale).toBe('')
    }
  })

  test('behavior: a change of the document changes the generated types (the staleness check can fail)', async () => {
    const document = (await openApiDocument({})) as { paths: Record<string, unknown> }
    const files = await clientFiles(document)
    const renamed = structuredClone(document)
    renamed.paths['/v0/platform/customers'] = renamed.paths['/v0/platform/accounts']
    delete renamed.paths['/v0/platform/accounts']
    const changed = await clientFiles(renamed)
    expect(changed['src/schema.d.ts']).not.toBe(files['src/schema.d.ts'])
    expect(changed['src/schema.d.ts']).toContain('"/v0/platform/customers"')
    expect(changed['openapi.json']).not.toBe(files['openapi.json'])
  })
})

describe('typed client: types', () => {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile)
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT)
  const roots = [path.join(ROOT, CLIENT_DIR, 'src/index.ts'), EXAMPLE, TYPES_CHECK]

  /** The compiler's errors over the client, its example and the type checks (`typesText` replacing the last). */
  function diagnostics(typesText?: string): ts.Diagnostic[] {
    const host = ts.createCompilerHost(options)
    const getSourceFile = host.getSourceFile.bind(host)
    host.getSourceFile = (file, language, ...rest) =>
      typesText !== undefined && path.resolve(file) === TYPES_CHECK
        ? ts.createSourceFile(file, typesText, language)
        : getSourceFile(file, language, ...rest)
    return [...ts.getPreEmitDiagnostics(ts.createProgram(roots, options, host))]
  }
  const describeAll = (list: readonly ts.Diagnostic[]) =>
    list.map((d) => `${d.file?.fileName}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`).join('\n')

  test('behavior: the client package, its example and the typed calls compile with the strict settings', () => {
    const found = diagnostics()
    expect(found, describeAll(found)).toEqual([])
  })

  test('behavior: each call marked @ts-expect-error (a misspelled path, a wrong method, body or field) is a type error', async () => {
    const text = await fs.readFile(TYPES_CHECK, 'utf8')
    const lines = text.split('\n')
    const marked = lines.flatMap((line, i) => (line.trim().startsWith('// @ts-expect-error') ? [i + 1] : []))
    expect(marked.length).toBeGreaterThanOrEqual(6)
    // the same file without the markers, line for line: an error on each line after a marker, none elsewhere
    const bare = lines.map((line) => (line.trim().startsWith('// @ts-expect-error') ? '' : line)).join('\n')
    const found = diagnostics(bare)
    const errorLines = new Set(
      found.map((d) => {
        expect(path.resolve(d.file?.fileName ?? ''), describeAll([d])).toBe(TYPES_CHECK)
        return d.file!.getLineAndCharacterOfPosition(d.start!).line
      }),
    )
    expect(
      [...errorLines].sort((a, b) => a - b),
      describeAll(found),
    ).toEqual(marked)
  })
})

describe('typed client: against a running service on the devnet', () => {
  const cleanups: (() => Promise<void>)[] = []
  let devnet: TestDevnet
  let env: Record<string, string>
  let base: string
  let client: { client_id: string; client_secret: string }

  beforeAll(async () => {
    if (!pgOk) return
    devnet = await startTestDevnet('typed-client', {
      days: 4,
      startDate: '2026-04-01',
      walletCount: 10,
      dayIntervalMs: 0,
      blockIntervalMs: 100,
    })
    cleanups.push(() => devnet.stop())
    const database = await createTestDatabase()
    cleanups.push(database.drop)
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    env = {
      DATA_DIR: devnet.dataDir,
      DATABASE_URL: database.url,
      SIGNING_KEY_SECRET: TEST_SIGNING_KEY_SECRET,
      RPC_URL: devnet.rpcUrl,
      CHAIN: 'devnet',
      CONFIRMATIONS: '0',
      PORT: String(port),
      LOG_LEVEL: 'warn',
    }
    // what an operator runs: migrate, ingest the chain, compute its days, an org and a client, the API
    await cli(['migrate'], env)
    const synced = await cli<{ reports: string[] }>(['sync'], env)
    expect(synced.reports.length).toBeGreaterThanOrEqual(4)
    await cliText(['backfill', '--from', '2026-04-01', '--to', '2026-04-04'], env)
    ;({ client } = await cliOrgClient(
      env,
      'Typed Client Platform',
      'read:platform write:platform read:eth-rewards',
    ))
    const api = await spawnCli(['api'], env, async () => (await fetch(`${base}/ready`)).status === 200)
    cleanups.push(api.stop)
  })
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })

  test.runIf(pgOk)(
    'behavior: `lsreport openapi` prints the document the running API serves at /docs/json',
    async () => {
      const served = await (await fetch(`${base}/docs/json`)).json()
      expect(served).toMatchObject({ servers: [{ url: base }] })
      expect(await cli(['openapi'], env)).toEqual(served)
      const out = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-openapi-')), 'openapi.json')
      cleanups.push(() => fs.rm(path.dirname(out), { recursive: true, force: true }))
      expect(await cliText(['openapi', '--out', out], env)).toBe('')
      expect(await fs.readFile(out, 'utf8')).toBe(documentText(served))
    },
  )

  test.runIf(pgOk)(
    'behavior: the example onboards a devnet holder and prints the rewards the API answers for it',
    async () => {
      const [holder] = initialHolders(devnet.simulator.state().wallets, 1)
      const address = holder!.toLowerCase()
      const example = async () => {
        const { stdout } = await run(process.execPath, ['--import', 'tsx', EXAMPLE, '--wallet', holder!], {
          cwd: ROOT,
          env: {
            ...process.env,
            LSREPORT_BASE_URL: base,
            LSREPORT_CLIENT_ID: client.client_id,
            LSREPORT_CLIENT_SECRET: client.client_secret,
          },
          timeout: 60_000,
        })
        const lines = stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line))
        expect(lines.map((line) => line.step)).toEqual(['account', 'wallet', 'rewards'])
        return lines
      }

      const [account, wallet, rewards] = await example()
      expect(account).toMatchObject({ created: true, account: { key: `customer-${address.slice(-8)}` } })
      expect(wallet).toMatchObject({ added: true, wallet: { address, account_id: account.account.id } })

      // what the API answers directly, with a token of the same client
      const call = http(base, await clientToken(base, client))
      const direct = await call('GET', `/eth/v1/rewards/wallets/${address}/summary`)
      expect(direct.status).toBe(200)
      expect(direct.body.days.length).toBeGreaterThanOrEqual(4)
      expect(Number(direct.body.totals.rewards_eth)).toBeGreaterThan(0)
      expect(rewards).toEqual({ step: 'rewards', address, summary: direct.body })
      const onboarded = await call('GET', `/v0/platform/accounts/${account.account.id}`)
      expect(onboarded.body.wallets.map((w: { address: string }) => w.address)).toEqual([address])

      // run again: the account and the wallet are found, not created twice
      const [again, againWallet, againRewards] = await example()
      expect([again.created, again.account.id]).toEqual([false, account.account.id])
      expect([againWallet.added, againWallet.wallet.id]).toEqual([false, wallet.wallet.id])
      expect(againRewards.summary).toEqual(direct.body)
    },
  )

  /** A fetch that records each request's method and path before sending it. */
  function recordingFetch() {
    const seen: string[] = []
    const fetcher = (request: Request) => {
      seen.push(`${request.method} ${new URL(request.url).pathname}`)
      return fetch(request)
    }
    return { seen, fetch: fetcher }
  }

  afterEach(() => {
    vi.useRealTimers()
  })

  test.runIf(pgOk)(
    'behavior: one token is asked for and reused until shortly (a minute) before it expires',
    async () => {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() })
      const recorder = recordingFetch()
      const api = createLsReportClient({
        baseUrl: base,
        clientId: client.client_id,
        clientSecret: client.client_secret,
        fetch: recorder.fetch,
      })
      const tokenRequests = () => recorder.seen.filter((line) => line === 'POST /oauth/token').length
      const [a, b] = await Promise.all([api.GET('/v0/platform/accounts'), api.GET('/v0/platform/wallets')])
      expect([a.response.status, b.response.status, tokenRequests()]).toEqual([200, 200, 1])
      // the service's tokens live a day (TOKEN_TTL_SECONDS): 2 minutes before the end the token is reused ...
      vi.setSystemTime(Date.now() + 86_400_000 - 120_000)
      expect((await api.GET('/v0/platform/accounts')).response.status).toBe(200)
      expect(tokenRequests()).toBe(1)
      // ... 30 s before, a new one is asked for
      vi.setSystemTime(Date.now() + 90_000)
      expect((await api.GET('/v0/platform/accounts')).response.status).toBe(200)
      expect(tokenRequests()).toBe(2)
      expect(recorder.seen.filter((line) => line !== 'POST /oauth/token')).toHaveLength(4)
    },
  )

  test.runIf(pgOk)(
    'behavior: a 401 drops the token and sends the request again, body included, with a new one; a second 401 is the answer',
    async () => {
      const real = clientCredentialsTokens({
        baseUrl: base,
        clientId: client.client_id,
        clientSecret: client.client_secret,
      })
      const good = await real.token()
      // a token the service refuses (its signature altered), handed out first
      const refused = `${good.slice(0, -4)}${good.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`
      const invalidated: string[] = []
      const once: TokenSource = {
        token: async () => (invalidated.length === 0 ? refused : real.token()),
        invalidate: (token) => invalidated.push(token),
      }
      const recorder = recordingFetch()
      const api = createClient<paths>({ baseUrl: base, fetch: recorder.fetch })
      api.use(bearerAuth(once))
      const created = await api.POST('/v0/platform/accounts', { body: { key: 'retried-once' } })
      expect([created.response.status, created.data?.key]).toEqual([201, 'retried-once'])
      expect(invalidated).toEqual([refused])
      expect(recorder.seen).toEqual(['POST /v0/platform/accounts', 'POST /v0/platform/accounts'])

      const never: TokenSource = {
        token: async () => refused,
        invalidate: (token) => invalidated.push(token),
      }
      const stuck = createClient<paths>({ baseUrl: base, fetch: recorder.fetch })
      stuck.use(bearerAuth(never))
      recorder.seen.length = 0
      const answer = await stuck.GET('/v0/platform/accounts')
      expect([answer.response.status, answer.error?.status]).toEqual([401, 'IR2001'])
      expect(recorder.seen).toEqual(['GET /v0/platform/accounts', 'GET /v0/platform/accounts'])
    },
  )

  test.runIf(pgOk)(
    'behavior: a refused token request throws TokenRequestError with the OAuth error',
    async () => {
      const api = createLsReportClient({ baseUrl: base, clientId: client.client_id, clientSecret: 'wrong' })
      const error = await api.GET('/v0/platform/accounts').catch((err: unknown) => err)
      expect(error).toBeInstanceOf(TokenRequestError)
      expect(error).toMatchObject({ status: 401, body: { error: 'invalid_client', status: 'IR2005' } })
    },
  )
})
