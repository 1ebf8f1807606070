import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Backend, http, orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()

/** Three days of chain 31337 (computed, failed, pending) and one of chain 1, as the day pipeline leaves them. */
async function seedDays(api: TestApi) {
  const day = (chainId: number, epoch: number, date: string, block: number) => ({
    chain_id: chainId,
    report_epoch: epoch,
    date,
    block_number: block,
    tx_index: 0,
    log_index: 3,
    block_hash: `0x${block.toString(16).padStart(64, '0')}`,
    block_time: new Date(`${date}T12:00:00Z`),
    previous_epoch: null,
    status: 'pending',
  })
  await api.dbh.db('days').insert([
    {
      ...day(31337, 438074, '2026-04-01', 100),
      status: 'computed',
      visible_version: 2,
      last_version: 2,
      wallets: 42,
      engine_version: '1.0.0',
      content_hash: 'a'.repeat(64),
      started_at: new Date('2026-11-23T10:00:00Z'),
      computed_at: new Date('2026-11-23T10:00:01.500Z'),
      duration_ms: 1500,
    },
    {
      ...day(31337, 438299, '2026-04-02', 200),
      previous_epoch: 438074,
      status: 'failed',
      last_version: 1,
      started_at: new Date('2026-11-23T10:00:02Z'),
      error: 'report epoch 438299 at block 200: supply went negative',
    },
    { ...day(31337, 438524, '2026-04-03', 300), previous_epoch: 438299 },
    { ...day(1, 9000, '2026-04-02', 5000) },
  ])
}

/** An API on `backend` holding `seedDays`' days and an admin caller, set up for the describe block around it. */
function seededApi(backend: Backend, enabled: boolean) {
  const seeded = {} as { api: TestApi; admin: ReturnType<typeof http> }
  beforeAll(async () => {
    if (!enabled) return
    seeded.api = await startTestApi(backend)
    await seedDays(seeded.api)
    seeded.admin = http(
      seeded.api.url,
      (await orgWithToken(seeded.api, { scopes: 'admin', name: 'Operators' })).token,
    )
  })
  afterAll(async () => {
    await seeded.api?.close()
  })
  return seeded
}

describe.each([
  ['pglite', true],
  ['postgres', pgOk],
] as [Backend, boolean][])('GET /v1/admin/days on %s', (backend, enabled) => {
  const seeded = seededApi(backend, enabled)

  test.runIf(enabled)('behavior: 401 without a token, 403 without the admin scope', async () => {
    const anonymous = await http(seeded.api.url)('GET', '/v1/admin/days')
    expect([anonymous.status, anonymous.body.status]).toEqual([401, 'IR2000'])
    const platform = await orgWithToken(seeded.api, { scopes: 'read:platform write:platform' })
    const forbidden = await http(seeded.api.url, platform.token)('GET', '/v1/admin/days')
    expect([forbidden.status, forbidden.body]).toEqual([
      403,
      { message: 'this endpoint needs the admin scope', status: 'IR2002' },
    ])
    const spec = (await http(seeded.api.url)('GET', '/docs/json')).body
    expect(spec.paths['/v1/admin/days'].get).toMatchObject({ tags: ['admin'], security: [{ bearer: [] }] })
  })

  test.runIf(enabled)(
    'behavior: lists every day with status, versions and timings, by chain and date range',
    async () => {
      const all = await seeded.admin('GET', '/v1/admin/days')
      expect(all.status).toBe(200)
      expect(all.body.map((d: { chain_id: number; date: string }) => `${d.chain_id}/${d.date}`)).toEqual([
        '1/2026-04-02',
        '31337/2026-04-01',
        '31337/2026-04-02',
        '31337/2026-04-03',
      ])
      const devnet = await seeded.admin('GET', '/v1/admin/days?chain_id=31337&from=2026-04-01&to=2026-04-02')
      expect(devnet.status).toBe(200)
      expect(devnet.body).toEqual([
        {
          chain_id: 31337,
          date: '2026-04-01',
          report_epoch: 438074,
          status: 'computed',
          wallets: 42,
          engine_version: '1.0.0',
          version: 2,
          computed_at: '2026-11-23T10:00:01.500Z',
          started_at: '2026-11-23T10:00:00.000Z',
          duration_ms: 1500,
          error: null,
        },
        {
          chain_id: 31337,
          date: '2026-04-02',
          report_epoch: 438299,
          status: 'failed',
          wallets: null,
          engine_version: null,
          version: null,
          computed_at: null,
          started_at: '2026-11-23T10:00:02.000Z',
          duration_ms: null,
          error: 'report epoch 438299 at block 200: supply went negative',
        },
      ])
      const pending = await seeded.admin('GET', '/v1/admin/days?from=2026-04-03')
      expect(pending.body).toMatchObject([{ chain_id: 31337, date: '2026-04-03', status: 'pending' }])
      expect((await seeded.admin('GET', '/v1/admin/days?chain_id=5')).body).toEqual([])
    },
  )

  test.runIf(enabled)('behavior: 400 with {message, status} on a malformed date or range', async () => {
    for (const query of [
      'from=2026-4-1',
      'to=2026-02-30',
      'from=yesterday',
      'chain_id=mainnet',
      'from=0000-01-01',
      'to=1969-12-31',
    ]) {
      const res = await seeded.admin('GET', `/v1/admin/days?${query}`)
      expect([res.status, res.body.status], query).toEqual([400, 'IR1000'])
      expect(res.body.message, query).toEqual(expect.stringMatching(/from|to|chain_id/))
    }
    const reversed = await seeded.admin('GET', '/v1/admin/days?from=2026-04-03&to=2026-04-01')
    expect([reversed.status, reversed.body]).toEqual([
      400,
      { message: 'from 2026-04-03 is after to 2026-04-01', status: 'IR1000' },
    ])
  })
})

describe.each([
  ['pglite', true],
  ['postgres', pgOk],
] as [Backend, boolean][])('POST /v1/admin/backfill on %s', (backend, enabled) => {
  const seeded = seededApi(backend, enabled)

  test.runIf(enabled)(
    'behavior: sends the range back to pending in the running service (recompute with its reason, failed days retried) and answers 202 before they are computed',
    async () => {
      const platform = await orgWithToken(seeded.api, { scopes: 'read:platform write:platform' })
      const body = { from: '2026-04-01', to: '2026-04-01', recompute: true, chain_id: 31337 }
      const forbidden = await http(seeded.api.url, platform.token)('POST', '/v1/admin/backfill', body)
      expect([forbidden.status, forbidden.body.status]).toEqual([403, 'IR2002'])

      const started = await seeded.admin('POST', '/v1/admin/backfill', {
        from: '2026-04-01',
        to: '2026-04-03',
        recompute: true,
        reason: 'discount',
        chain_id: 31337,
      })
      expect([started.status, started.body]).toEqual([
        202,
        {
          chain_id: 31337,
          from: '2026-04-01',
          to: '2026-04-03',
          days: 3,
          retried: 1,
          recomputed: 3,
          ingested: { from: '2026-04-01', to: '2026-04-03' },
        },
      ])
      const days = await seeded.admin('GET', '/v1/admin/days?chain_id=31337')
      expect(days.body.map((d: { status: string }) => d.status)).toEqual(['pending', 'pending', 'pending'])
      // the computed day keeps the version readers see until its recompute publishes (or finds nothing new)
      expect(days.body[0]).toMatchObject({ date: '2026-04-01', version: 2 })
      const reason = await seeded.api.dbh.db('days').where({ chain_id: 31337, report_epoch: 438074 }).first()
      expect(reason.reason).toBe('discount')
    },
  )

  test.runIf(enabled)('behavior: 400 with {message, status} on a bad range, body or chain', async () => {
    const cases: [unknown, RegExp][] = [
      [
        { from: '2026-04-01', to: '2026-05-01', chain_id: 31337 },
        /^to 2026-05-01 is after the latest ingested report/,
      ],
      [{ from: '2026-04-03', to: '2026-04-01', chain_id: 31337 }, /^from 2026-04-03 is after to 2026-04-01$/],
      [{ from: '2026-02-30', to: '2026-04-01', chain_id: 31337 }, /^from must be a date/],
      [{ from: '2026-04-01', to: '2026-04-01' }, /chain_id is needed: the service follows chains 1, 31337/],
      [
        { from: '2026-04-01', to: '2026-04-01', chain_id: 31337, reason: 'discount' },
        /reason goes with recompute/,
      ],
      [{ from: '2026-04-01', to: '2026-04-01', chain_id: 31337, recompute: true, reason: 'whim' }, /reason/],
      [{ from: '2026-04-01', chain_id: 31337 }, /to/],
      [{ from: '2026-04-01', to: '2026-04-01', chain_id: 31337, extra: 1 }, /extra|additional/],
    ]
    for (const [body, message] of cases) {
      const res = await seeded.admin('POST', '/v1/admin/backfill', body)
      expect([res.status, res.body.status], JSON.stringify(body)).toEqual([400, 'IR1000'])
      expect(res.body.message, JSON.stringify(body)).toMatch(message)
    }
  })
})
