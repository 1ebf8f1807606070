import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { promisify } from 'node:util'
import { parse } from 'csv-parse/sync'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createClient } from '../../cli/admin.ts'
import { createLogger } from '../../common/logger.ts'
import { createRepos } from '../../db/repos/index.ts'
import { buildExport } from '../../jobs/exports/build.ts'
import { createExportJobs, EXPORT_JOBS } from '../../jobs/exports/index.ts'
import { createBullRunner, createInlineRunner, type JobRunner } from '../../jobs/runner.ts'
import { createWebhookJobs, WEBHOOK_JOBS } from '../../jobs/webhooks/index.ts'
import { createPlatformService } from '../../platform/service.ts'
import { type Backend, clientToken, http, startTestApi, type TestApi } from './api.ts'
import { testSealingKey } from './cli.ts'
import { type ComputedHistory, computedHistory } from './days.ts'
import { REDIS_URL } from './services.ts'
import { startWebhookReceiver, until, type WebhookReceiver } from './webhook-receiver.ts'

/**
 * Exports as jobs (issue 38, Done-when 3), on Postgres + BullMQ and on the embedded PGlite with the inline
 * runner: an organization-wide journal export of a quarter completes as a job, its file (downloaded through the
 * signed link by a plain GET and by curl, no header) is the builder's bytes and balances to the wei, fires
 * export.completed, and the link is refused once expired, altered or moved to another organization's export.
 */

const run = promisify(execFile)
const BIN = path.resolve(import.meta.dirname, '../../bin/lsreport.mjs')
const silent = createLogger({ level: 'silent' })
const QUARTER = { from: '2026-04-01', to: '2026-06-30' }

interface Org {
  id: string
  token: string
  client: { client_id: string; client_secret: string }
}

/**
 * The export suite over its backends (one devnet history computed into each, an API and a runner per backend;
 * test/exports.test.ts), and `lsreport export` as a process against the first backend's API.
 */
export function exportSuite(backends: Backend[]) {
  describe(`exports as jobs (${backends.join(', ')})`, () => {
    let history: ComputedHistory
    let receiver: WebhookReceiver
    const stacks = new Map<
      Backend,
      { api: TestApi; runner: JobRunner; org: Org; other: Org; secret: string }
    >()

    beforeAll(async () => {
      history = await computedHistory({
        backends,
        before: 1,
        after: 3,
        walletCount: 10,
        onboard: async (db, _backend, devnet) => {
          const holders = devnet.simulator
            .state()
            .wallets.filter((w) => w.shares > 0n)
            .slice(0, 3)
          const platform = createPlatformService(db)
          const org = await createRepos(db).orgs.create({ name: 'exporter', canAllowlist: true })
          for (const [i, w] of holders.entries()) {
            await platform.createAccount(org.id, `acct-${i}`, 'test')
            await platform.createWallet(
              org,
              `acct-${i}`,
              { address: w.address.toLowerCase(), type: 'ETH', allowlisted: false },
              'test',
            )
          }
          await createRepos(db).orgs.create({ name: 'other', canAllowlist: false })
        },
      })
      receiver = await startWebhookReceiver()
      for (const backend of backends) {
        const dbh = history.databases.get(backend)!
        const api = await startTestApi(
          backend,
          { DATA_DIR: history.dataDir, RATE_LIMIT_MAX: '100000', WEBHOOK_ALLOW_PRIVATE: '1' },
          { dbh },
        )
        const orgOf = async (name: string): Promise<Org> => {
          const row = await dbh.db('orgs').where({ name }).first('id')
          const client = await createClient(dbh.db, {
            orgId: row.id,
            scopes: 'read:eth-rewards read:platform write:platform',
          })
          return { id: row.id, client, token: await clientToken(api.url, client) }
        }
        const org = await orgOf('exporter')
        const other = await orgOf('other')
        const processors = {
          ...createExportJobs({ db: dbh.db, logger: silent, runner: () => runner }),
          ...createWebhookJobs({
            db: dbh.db,
            logger: silent,
            options: { allowPrivate: true, timeoutMs: 2_000, retryBaseMs: 100, retryWindowMs: 60_000 },
            sealingKey: testSealingKey,
            runner: () => runner,
          }).processors,
        }
        const runner: JobRunner =
          backend === 'postgres'
            ? createBullRunner(processors, {
                redisUrl: REDIS_URL,
                prefix: `t${randomBytes(4).toString('hex')}`,
                logger: silent,
              })
            : createInlineRunner(processors, silent)
        await runner.start()
        await runner.every(EXPORT_JOBS.dispatch, 200)
        await runner.every(WEBHOOK_JOBS.dispatch, 150)
        const hook = await http(api.url, org.token)('POST', '/v1/webhooks', {
          url: `${receiver.url}/${backend}`,
          events: ['export.completed'],
        })
        expect(hook.status).toBe(201)
        stacks.set(backend, { api, runner, org, other, secret: hook.body.secret })
      }
    }, 120_000)

    afterAll(async () => {
      for (const s of stacks.values()) {
        await s.runner.close()
        await s.api.close()
      }
      await receiver?.close()
      await history?.close()
    })

    /** Asks for an export and waits for it to finish; its last GET answer. */
    async function exportDone(backend: Backend, body: Record<string, unknown>, query = '') {
      const { api, org } = stacks.get(backend)!
      const call = http(api.url, org.token)
      const created = await call('POST', '/v1/exports', body)
      expect(created.status, JSON.stringify(created.body)).toBe(202)
      expect(created.headers.get('location')).toBe(`/v1/exports/${created.body.id}`)
      expect(created.body.state).toBe('queued')
      let answer = created
      await until(
        'export finished',
        async () => {
          answer = await call('GET', `/v1/exports/${created.body.id}${query}`)
          return answer.body.state === 'completed' || answer.body.state === 'failed'
        },
        30_000,
      )
      return answer.body
    }

    describe.each(backends)('%s', (backend) => {
      test('behavior: an organization-wide quarter journal export completes as a job, downloads with no header (fetch and curl), balances to the wei, equals the builder and fires export.completed', async () => {
        const { api, org, secret } = stacks.get(backend)!
        const done = await exportDone(backend, { ...QUARTER, kind: 'journal', granularity: 'quarter' })
        expect(done.state, done.error).toBe('completed')
        expect(done.progress.percent).toBe(100)
        expect(done.download_url).toMatch(/^\/v1\/exports\/[0-9a-f-]{36}\/download\?expires=\d+&signature=/)

        const res = await fetch(`${api.url}${done.download_url}`)
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toMatch(/^text\/csv/)
        expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="lsreport-journal-/)
        expect(res.headers.get('etag')).toBe(`"${done.sha256}"`)
        const bytes = Buffer.from(await res.arrayBuffer())
        expect(Number(res.headers.get('content-length'))).toBe(bytes.length)
        expect(bytes.length).toBe(done.bytes)
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(done.sha256)

        // curl, as a process, with no header
        const curled = await run('curl', ['-sS', '-f', `${api.url}${done.download_url}`], {
          encoding: 'buffer',
          maxBuffer: 64 * 1024 * 1024,
        })
        expect(Buffer.compare(curled.stdout, bytes)).toBe(0)

        // the same bytes as the builder's own
        const parts: Buffer[] = []
        const sink = new Writable({
          write(chunk, _e, cb) {
            parts.push(Buffer.from(chunk))
            cb()
          },
        })
        const direct = await buildExport(
          createRepos(api.dbh.db),
          {
            chainId: history.devnet.chainId,
            orgId: org.id,
            accountIds: null,
            ...QUARTER,
            granularity: 'quarter',
            currency: null,
            kind: 'journal',
            apiVersion: 'v1',
          },
          sink,
        )
        expect({ bytes: direct.bytes, sha256: direct.sha256, rows: direct.rows }).toEqual({
          bytes: done.bytes,
          sha256: done.sha256,
          rows: done.rows,
        })
        expect(Buffer.compare(Buffer.concat(parts), bytes)).toBe(0)

        // balanced: debits equal credits per account and period, to the wei
        const rows = parse(bytes, { columns: true }) as Record<string, string>[]
        expect(rows.length).toBe(done.rows)
        expect(new Set(rows.map((r) => r.account_id)).size).toBe(3)
        const sums = new Map<string, bigint>()
        for (const r of rows) {
          const k = `${r.account_id} ${r.period}`
          sums.set(k, (sums.get(k) ?? 0n) + BigInt(r.debit_wei as string) - BigInt(r.credit_wei as string))
        }
        expect(rows.some((r) => BigInt(r.debit_wei as string) > 0n)).toBe(true)
        for (const [k, sum] of sums) expect(sum, k).toBe(0n)

        // export.completed, signed (standardwebhooks verifies it)
        await until('export.completed delivered', async () =>
          receiver.received.some((r) => r.path === `/${backend}` && r.body.includes(done.id)),
        )
        const delivery = receiver.received.find((r) => r.path === `/${backend}` && r.body.includes(done.id))!
        const event = new Webhook(secret).verify(delivery.body, delivery.headers) as {
          type: string
          data: Record<string, unknown>
        }
        expect(event.type).toBe('export.completed')
        expect(event.data).toMatchObject({ export_id: done.id, sha256: done.sha256, bytes: done.bytes })
      }, 60_000)

      test('behavior: the link expires, is refused altered or for another organization, and another organization cannot read the export', async () => {
        const { api, org, other } = stacks.get(backend)!
        const mine = await exportDone(
          backend,
          { ...QUARTER, kind: 'records', account_ids: ['acct-0'] },
          '?link_ttl=1',
        )
        expect(mine.state, mine.error).toBe('completed')
        expect(mine.account_ids).toHaveLength(1)
        // another organization: 404, and its own export's id in this link: 403
        expect((await http(api.url, other.token)('GET', `/v1/exports/${mine.id}`)).status).toBe(404)
        const theirs = await exportDone(backend, { ...QUARTER, kind: 'records' })
        const moved = (
          await http(api.url, org.token)('GET', `/v1/exports/${mine.id}`)
        ).body.download_url.replace(mine.id, theirs.id)
        const refused = await http(api.url)('GET', moved)
        expect([refused.status, refused.body.status]).toEqual([403, 'IR3801'])
        const fresh = (await http(api.url, org.token)('GET', `/v1/exports/${mine.id}`)).body
          .download_url as string
        const tampered = fresh.replace(
          /signature=(.)/,
          (_m, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`,
        )
        expect((await http(api.url)('GET', tampered)).status).toBe(403)
        const later = fresh.replace(/expires=(\d+)/, (_m, e: string) => `expires=${Number(e) + 3600}`)
        expect((await http(api.url)('GET', later)).status).toBe(403)
        // the 1-second link, once past its second
        const expires = Number(/expires=(\d+)/.exec(mine.download_url)?.[1])
        await new Promise((r) => setTimeout(r, Math.max(0, expires * 1000 - Date.now()) + 1_100))
        const expired = await http(api.url)('GET', mine.download_url)
        expect([expired.status, expired.body.status]).toEqual([410, 'IR3802'])
        expect(expired.body.message).toMatch(/expired/)
      }, 60_000)

      test('behavior: bad inputs are 400 (or 404 for an unknown account) with {message, status}', async () => {
        const { api, org } = stacks.get(backend)!
        const call = http(api.url, org.token)
        const cases: [Record<string, unknown>, number, string][] = [
          [{ from: '2026-06-30', to: '2026-04-01', kind: 'journal' }, 400, 'IR4001'],
          [{ from: '2026-02-30', to: '2026-04-01', kind: 'journal' }, 400, 'IR1000'],
          [{ from: '2025-01-01', to: '2026-06-30', kind: 'journal' }, 400, 'IR4001'],
          [{ ...QUARTER }, 400, 'IR1000'],
          [{ ...QUARTER, kind: 'records', format: 'xlsx' }, 400, 'IR1000'],
          [{ ...QUARTER, kind: 'journal', journal_accounts: { nope: 'x' } }, 400, 'IR1000'],
          [{ ...QUARTER, kind: 'records', journal_accounts: { holdings: 'x' } }, 400, 'IR1000'],
          [{ ...QUARTER, kind: 'records', account_ids: ['no-such-account'] }, 404, 'IR3000'],
        ]
        for (const [body, status, code] of cases) {
          const res = await call('POST', '/v1/exports', body)
          expect([JSON.stringify(body), res.status, res.body.status]).toEqual([
            JSON.stringify(body),
            status,
            code,
          ])
          expect(res.body.message).toEqual(expect.any(String))
        }
        expect((await call('GET', '/v1/exports/00000000-0000-4000-8000-000000000000')).status).toBe(404)
        expect((await call('GET', '/v1/exports/not-a-uuid')).status).toBe(400)
      })
    })

    test('behavior: `lsreport export` against a running service writes the file, checked against its sha256', async () => {
      const { api, org } = stacks.get(backends[0] as Backend)!
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-export-cli-'))
      try {
        const credentials = path.join(dir, 'client.json')
        await fs.writeFile(
          credentials,
          JSON.stringify({ ...org.client, token_url: `${api.url}/oauth/token`, audience: api.url }),
        )
        const out = path.join(dir, 'journal.csv')
        const { stderr } = await run(
          process.execPath,
          [
            BIN,
            'export',
            ...['--from', QUARTER.from, '--to', QUARTER.to, '--kind', 'journal'],
            '--granularity',
            'month',
            '--credentials',
            credentials,
            '--out',
            out,
          ],
          { env: { ...process.env, DATA_DIR: dir, LOG_LEVEL: 'warn' } },
        )
        const file = await fs.readFile(out)
        const sha = createHash('sha256').update(file).digest('hex')
        expect(stderr).toContain(`sha256 ${sha}`)
        const id = /export ([0-9a-f-]{36}):/.exec(stderr)?.[1]
        const shown = await http(api.url, org.token)('GET', `/v1/exports/${id}`)
        expect([shown.body.sha256, shown.body.bytes]).toEqual([sha, file.length])
      } finally {
        await fs.rm(dir, { recursive: true, force: true })
      }
    }, 60_000)
  })
}
