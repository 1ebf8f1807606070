import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Webhook } from 'standardwebhooks'
import type { Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createChainClient } from '../chain/client.ts'
import { setupFromDevnet } from '../cli/chain-setup.ts'
import { createLogger } from '../common/logger.ts'
import { createRepos, inTransaction } from '../db/repos/index.ts'
import { WEBHOOK_EVENT_TYPES } from '../db/repos/webhooks.ts'
import { type DevnetHandle, startDevnet } from '../devnet/index.ts'
import { createJobs } from '../jobs/index.ts'
import { createInlineRunner, type JobRunner } from '../jobs/runner.ts'
import { http, orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { denyOnChain } from './helpers/chain.ts'
import { testSealingKey } from './helpers/cli.ts'
import { postgresAvailable } from './helpers/services.ts'
import { startWebhookReceiver, until, type WebhookReceiver } from './helpers/webhook-receiver.ts'

const pgOk = await postgresAvailable()
const silent = createLogger({ level: 'silent' })
// export.completed needs an export asked for: test/exports-*.test.ts checks its delivery
const ALL_EVENTS = WEBHOOK_EVENT_TYPES.filter((t) => t !== 'export.completed')

describe.runIf(pgOk)('signed webhooks on the devnet (API -> outbox -> delivery jobs -> receiver)', () => {
  let devnet: DevnetHandle
  let api: TestApi
  let runner: JobRunner
  let receiver: WebhookReceiver
  let dataDir: string

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-webhooks-'))
    devnet = await startDevnet({
      dataDir,
      days: 2,
      walletCount: 10,
      dayIntervalMs: 0,
      blockIntervalMs: 100,
      history: 'current', // redemptions from day 0 (the RedeemManager exists from River 1.0.0)
      simulator: { behavior: { redeem: 3, claim: 1 } },
    })
    receiver = await startWebhookReceiver()
    api = await startTestApi('postgres', { WEBHOOK_ALLOW_PRIVATE: '1' })
    const jobs = createJobs({
      db: api.dbh.db,
      logger: silent,
      chain: setupFromDevnet(devnet),
      confirmations: 0,
      webhooks: { allowPrivate: true, timeoutMs: 2_000, retryBaseMs: 100, retryWindowMs: 60_000 },
      webhookSealingKey: testSealingKey,
    })
    // the chain clock the registrations are stamped with
    await jobs.follower.syncOnce()
    runner = createInlineRunner(jobs.processors, silent)
    jobs.useRunner(runner)
    await runner.start()
  }, 300_000)
  afterAll(async () => {
    await runner?.close()
    await api?.close()
    await receiver?.close()
    await devnet?.stop()
    await fs.rm(dataDir, { recursive: true, force: true })
  })

  const _chain = () => createChainClient({ rpcUrl: devnet.rpcUrl, chainId: devnet.chainId })

  const fresh = () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase()

  test('behavior: every event type reaches its subscriber signed (standardwebhooks verifies it; a tampered body fails), each event once, other organizations get only day.finalized', async () => {
    const org = await orgWithToken(api, { name: 'hooked' })
    const other = await orgWithToken(api, { name: 'bystander' })
    const call = http(api.url, org.token)
    const created = await call('POST', '/v1/webhooks', {
      url: `${receiver.url}/org`,
      events: ALL_EVENTS,
      description: 'every event',
    })
    expect(created.status).toBe(201)
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{40,}={0,2}$/)
    const otherHook = await http(api.url, other.token)('POST', '/v1/webhooks', {
      url: `${receiver.url}/other`,
      events: ALL_EVENTS,
    })
    expect(otherHook.status).toBe(201)

    // the simulator's wallets (they redeem and claim) belong to the organization
    await call('POST', '/v0/platform/accounts', { key: 'holders' })
    for (const w of devnet.simulator.state().wallets) {
      const res = await call('POST', '/v0/platform/accounts/holders/wallets', {
        address: w.address,
        type: 'ETH',
        allowlisted: false,
      })
      expect(res.status).toBe(200)
    }
    // one wallet to allowlist, one to remove, one denied on chain (its account is denied), and one denied on chain
    // before it is onboarded (its allowlisting fails for good: AttemptToRemoveDenyPermission)
    const onboard = fresh()
    const leaver = fresh()
    const denied = fresh()
    const refused = fresh()
    await denyOnChain(devnet, refused as Address)
    for (const [key, address, allowlisted] of [
      ['onboard', onboard, true],
      ['leaver', leaver, false],
      ['denied', denied, false],
      ['refused', refused, true],
    ] as const) {
      await call('POST', '/v0/platform/accounts', { key })
      expect(
        (await call('POST', `/v0/platform/accounts/${key}/wallets`, { address, type: 'ETH', allowlisted }))
          .status,
      ).toBe(200)
    }
    expect((await call('PATCH', `/v0/platform/accounts/leaver/wallets/${leaver}/remove`)).status).toBe(200)
    await denyOnChain(devnet, denied as Address)

    await runner.every('sync', 200)
    await runner.every('allowlist', 200)
    await runner.every('days', 300)
    await runner.every('webhooks', 150)
    await devnet.simulator.runDays(3)

    const types = () =>
      new Set(receiver.received.filter((r) => r.path === '/org').map((r) => JSON.parse(r.body).type))
    await until(
      'every event type delivered',
      async () => ALL_EVENTS.every((t) => types().has(t)),
      120_000,
    ).catch((err) => {
      throw new Error(`${err.message}: got ${[...types()].join(', ')}`)
    })
    // let every report's day finish and its deliveries go out: the follower may still be ingesting the
    // simulation's last blocks after the event types arrived, so the delivery log and the receiver are
    // compared once they agree (a delivery logged but not yet received is still on its way)
    const reports = devnet.simulator.consensusHistory().length
    const received = () =>
      new Set(receiver.received.filter((r) => r.path === '/org').map((r) => r.headers['webhook-id']))
    await until(
      'all deliveries done',
      async () => {
        const pending = await api.dbh.db('webhook_deliveries').where({ status: 'pending' }).count({ n: '*' })
        const days: { status: string }[] = await api.dbh.db('days').select('status')
        const log = await api.dbh
          .db('webhook_deliveries')
          .where({ webhook_id: created.body.id })
          .select('event_id')
        const got = received()
        return (
          Number(pending[0]?.n) === 0 &&
          days.length === reports &&
          days.every((d) => d.status === 'computed') &&
          log.length === got.size &&
          log.every((d: { event_id: string }) => got.has(d.event_id))
        )
      },
      120_000,
    )

    const wh = new Webhook(created.body.secret)
    const mine = receiver.received.filter((r) => r.path === '/org')
    for (const r of mine) {
      const payload = wh.verify(r.body, r.headers) as { id: string; type: string; data: object }
      expect(payload.id).toBe(r.headers['webhook-id'])
      expect(ALL_EVENTS).toContain(payload.type)
      const tampered = r.body.replace('"data":{', '"data":{"x":1,')
      expect(() => wh.verify(tampered, r.headers)).toThrow()
      // the other organization's secret does not verify it
      expect(() => new Webhook(otherHook.body.secret).verify(r.body, r.headers)).toThrow()
    }
    // each event once, and the receiver got exactly the events emitted for this subscription
    const ids = mine.map((r) => r.headers['webhook-id'])
    expect(new Set(ids).size).toBe(ids.length)
    const logged = await call('GET', `/v1/webhooks/${created.body.id}/deliveries?limit=1000`)
    expect(logged.status).toBe(200)
    expect(new Set(logged.body.map((d: { event_id: string }) => d.event_id))).toEqual(new Set(ids))
    expect(logged.body.every((d: { status: string }) => d.status === 'succeeded')).toBe(true)

    const byType = (type: string) =>
      mine.map((r) => JSON.parse(r.body)).filter((e) => e.type === type) as {
        data: Record<string, unknown>
      }[]
    expect(byType('wallet.allowlisted').map((e) => e.data.address)).toContain(onboard)
    expect(byType('wallet.removed').map((e) => e.data.address)).toEqual([leaver])
    expect(
      byType('account.denied')
        .map((e) => e.data.key)
        .sort(),
    ).toEqual(['denied', 'refused'])
    expect(byType('wallet.allowlist_change_failed').map((e) => [e.data.address, e.data.final])).toEqual([
      [refused, true],
    ])
    const holders = new Set(devnet.simulator.state().wallets.map((w) => w.address.toLowerCase()))
    for (const e of [...byType('redeem.satisfied'), ...byType('redeem.claimed')]) {
      expect(holders.has(String(e.data.owner))).toBe(true)
    }
    // one day.finalized per computed day, version 1, not a recompute
    const days = await api.dbh.db('days').where({ status: 'computed' }).select('report_epoch')
    const finalized = byType('day.finalized')
    expect(finalized.map((e) => e.data.report_epoch).sort()).toEqual(
      days.map((d: { report_epoch: string }) => String(d.report_epoch)).sort(),
    )
    expect(finalized.every((e) => e.data.version === 1 && e.data.recomputed === false)).toBe(true)

    // the other organization: the same day.finalized events, none of this organization's wallets or redeems
    const theirs = receiver.received.filter((r) => r.path === '/other').map((r) => JSON.parse(r.body))
    expect(new Set(theirs.map((e) => e.type))).toEqual(new Set(['day.finalized']))
    expect(theirs.length).toBe(finalized.length)
  }, 200_000)

  test('behavior: a replay re-sends a delivery with the same webhook-id; a recompute emits nothing when the figures are unchanged, a new day.finalized (recomputed: true) when they change', async () => {
    // the first test's last days may still be finalizing: every report's day is computed first, so the
    // day.finalized events counted below are this test's own
    const reports = devnet.simulator.consensusHistory().length
    await until(
      'every day computed',
      async () => {
        const days: { status: string }[] = await api.dbh.db('days').select('status')
        return days.length === reports && days.every((d) => d.status === 'computed')
      },
      120_000,
    )
    const org = await orgWithToken(api, { name: 'replayer' })
    const call = http(api.url, org.token)
    const hook = await call('POST', '/v1/webhooks', {
      url: `${receiver.url}/replay`,
      events: ['day.finalized'],
    })
    // an event emitted in a transaction, as the day job does (other day.finalized events may reach the
    // receiver meanwhile: deliveries are told apart by their webhook-id)
    const eventId = await inTransaction(api.dbh.db, (repos) =>
      repos.webhooks.emit({
        type: 'day.finalized',
        factKey: `test:replay:${Date.now()}`,
        orgId: null,
        data: { test: true },
      }),
    )
    const first = await until('first delivery', async () => {
      const log = await call('GET', `/v1/webhooks/${hook.body.id}/deliveries`)
      return log.body.find(
        (d: { status: string; event_id: string }) => d.event_id === eventId && d.status === 'succeeded',
      )
    })
    expect(first.attempts).toBe(1)
    const before = receiver.received.filter((r) => r.path === '/replay').length
    const replay = await call('POST', `/v1/webhooks/${hook.body.id}/deliveries/${first.id}/replay`)
    expect(replay.status).toBe(202)
    expect(replay.body).toMatchObject({ id: first.id, event_id: first.event_id, status: 'pending' })
    const resent = await until('replayed with the same webhook-id', async () =>
      receiver.received
        .filter((r) => r.path === '/replay')
        .slice(before)
        .find((r) => r.headers['webhook-id'] === first.event_id),
    )
    new Webhook(hook.body.secret).verify(resent.body, resent.headers)
    const after = await until('replay logged', async () => {
      const log = await call('GET', `/v1/webhooks/${hook.body.id}/deliveries`)
      const d = log.body.find((x: { id: string }) => x.id === first.id)
      return d.status === 'succeeded' && d.attempts === 2 ? d : undefined
    })
    expect(after.event_id).toBe(first.event_id)

    // a recompute of a computed day with the same figures: no new day.finalized
    const db = api.dbh.db
    const events = async () =>
      Number((await db('webhook_events').where({ type: 'day.finalized' }).count({ n: '*' }))[0]?.n)
    const dayNow = () =>
      db('days').where({ chain_id: devnet.chainId, report_epoch: day.report_epoch }).first()
    // a run of the day spends a version number (`last_version`); only changed records publish it
    const recompute = async (previous: number, reason?: 'discount') => {
      await createRepos(db).days.requestRecompute(devnet.chainId, { from: day.d, to: day.d }, reason)
      return until('recomputed', async () => {
        const d = await dayNow()
        return d.status === 'computed' && d.last_version > previous ? d : undefined
      })
    }
    const count = await events()
    const day = await db('days')
      .where({ status: 'computed' })
      .orderBy('block_number', 'desc')
      .first('*', db.raw("to_char(date, 'YYYY-MM-DD') as d"))
    const same = await recompute(day.last_version)
    expect(same.content_hash).toBe(day.content_hash)
    expect(same.visible_version).toBe(day.visible_version)
    expect(await events()).toBe(count)

    // the holders' account gets a discount from before that day: its figures change, a new event says so
    const holders = await db('accounts').where({ key: 'holders' }).first()
    await db('discount_rates').insert({
      account_id: holders.id,
      target_fee_rate: '0.02',
      created_by: 'test',
      effective_from: new Date((day.block_time as Date).getTime() - 1000),
    })
    const changed = await recompute(same.last_version, 'discount')
    expect(changed.content_hash).not.toBe(day.content_hash)
    const announced = await until('recompute announced', async () =>
      receiver.received
        .filter((r) => r.path === '/replay')
        .map((r) => JSON.parse(r.body))
        .find((e) => e.type === 'day.finalized' && e.data.version === changed.visible_version),
    )
    expect(announced.data).toMatchObject({
      report_epoch: String(day.report_epoch),
      recomputed: true,
      content_hash: changed.content_hash,
      previous_version: same.visible_version,
      previous_content_hash: day.content_hash,
      // the restatement log: why, and where every version of the day is listed
      reason: 'discount',
      versions_url: `/v1/reports/${day.d}/versions`,
    })
    const reader = http(
      api.url,
      (await orgWithToken(api, { name: 'reader', scopes: 'read:eth-rewards' })).token,
    )
    const versions = await reader('GET', announced.data.versions_url)
    expect(versions.status).toBe(200)
    expect(versions.body.versions.map((v: { reason: string }) => v.reason)).toEqual(['first', 'discount'])
    expect(await events()).toBe(count + 1)
  }, 120_000)

  test('behavior: CRUD, organization scoping, refused URLs, scopes', async () => {
    const org = await orgWithToken(api, { name: 'crud' })
    const other = await orgWithToken(api, { name: 'crud-other' })
    const call = http(api.url, org.token)
    const them = http(api.url, other.token)
    const created = await call('POST', '/v1/webhooks', {
      url: 'https://93.184.215.14/hook',
      events: ['redeem.claimed'],
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      url: 'https://93.184.215.14/hook',
      events: ['redeem.claimed'],
      description: null,
    })
    const id = created.body.id as string
    const listed = await call('GET', '/v1/webhooks')
    expect(listed.body).toEqual([
      {
        id,
        url: 'https://93.184.215.14/hook',
        events: ['redeem.claimed'],
        description: null,
        created_at: created.body.created_at,
      },
    ])
    expect((await call('GET', `/v1/webhooks/${id}`)).body).not.toHaveProperty('secret')

    // another organization's webhook answers exactly like an unknown one
    const unknown = '00000000-0000-4000-8000-000000000000'
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/deliveries'],
      ['DELETE', ''],
      ['POST', `/deliveries/${unknown}/replay`],
    ] as const) {
      const theirs = await them(method, `/v1/webhooks/${id}${suffix}`)
      const none = await them(method, `/v1/webhooks/${unknown}${suffix}`)
      expect(theirs.status, `${method} ${suffix}`).toBe(404)
      expect(theirs.body).toEqual({ message: `webhook "${id}" not found`, status: 'IR3600' })
      expect(none.body).toEqual({ message: `webhook "${unknown}" not found`, status: 'IR3600' })
    }
    expect((await them('GET', '/v1/webhooks')).body).toEqual([])
    const noDelivery = await call('POST', `/v1/webhooks/${id}/deliveries/${unknown}/replay`)
    expect(noDelivery).toMatchObject({ status: 404, body: { status: 'IR3602' } })

    // input
    for (const body of [
      { url: 'ftp://93.184.215.14/x', events: ['day.finalized'] },
      { url: 'https://u:p@93.184.215.14/x', events: ['day.finalized'] },
      { url: 'not a url', events: ['day.finalized'] },
    ]) {
      const res = await call('POST', '/v1/webhooks', body)
      expect(res, body.url).toMatchObject({ status: 400, body: { status: 'IR3601' } })
    }
    for (const body of [
      { url: 'https://93.184.215.14/x', events: [] },
      { url: 'https://93.184.215.14/x', events: ['day.started'] },
      { url: 'https://93.184.215.14/x' },
      { url: 'https://93.184.215.14/x', events: ['day.finalized'], extra: 1 },
    ]) {
      const res = await call('POST', '/v1/webhooks', body)
      expect(res, JSON.stringify(body)).toMatchObject({ status: 400, body: { status: 'IR1000' } })
    }

    // without WEBHOOK_ALLOW_PRIVATE: loopback, private and link-local hosts are refused
    const strict = await startTestApi('postgres', {}, { dbh: api.dbh })
    try {
      const s = await orgWithToken(strict, { name: 'strict' })
      const strictCall = http(strict.url, s.token)
      for (const url of [
        `${receiver.url}/x`,
        'http://localhost:8080/x',
        'http://10.1.2.3/x',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/x',
        'http://[fd00::1]/x',
      ]) {
        const res = await strictCall('POST', '/v1/webhooks', { url, events: ['day.finalized'] })
        expect(res, url).toMatchObject({ status: 400, body: { status: 'IR3601' } })
      }
    } finally {
      await strict.close()
    }

    // scopes: reading needs read:platform, writing write:platform
    const reader = await orgWithToken(api, { name: 'reader', scopes: 'read:platform' })
    const read = http(api.url, reader.token)
    expect((await read('GET', '/v1/webhooks')).status).toBe(200)
    expect(
      (await read('POST', '/v1/webhooks', { url: 'https://93.184.215.14/x', events: ['day.finalized'] })).body
        .status,
    ).toBe('IR2002')

    expect((await call('DELETE', `/v1/webhooks/${id}`)).status).toBe(204)
    expect((await call('GET', `/v1/webhooks/${id}`)).status).toBe(404)
    expect((await call('DELETE', `/v1/webhooks/${id}`)).status).toBe(404)
  }, 60_000)
})
