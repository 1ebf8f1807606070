import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { DbHandle } from '../db/index.ts'
import type { ReportDay } from '../db/repos/reports.ts'
import { clientToken, startTestApi, type TestApi } from './helpers/api.ts'
import { publishNewVersion } from './helpers/records.ts'
import { seedRewardsDay } from './helpers/rewards-day.ts'
import { IN_CI, migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
if (IN_CI && !pgOk) throw new Error('Postgres is required in CI')

interface Answer {
  status: number
  body: string
  headers: Record<string, string | null>
}

/** The headers an answer's bytes come with (the memo must give them back as they were). */
const KEPT_HEADERS = ['content-type', 'content-disposition', 'etag', 'x-report-epoch', 'x-report-date']

/**
 * The reporting answers kept under their ETag (api/answer-memo.ts): an identical request is answered with
 * the bytes of the first answer, which must equal what an app with nothing kept builds, and a new version
 * of a day is never answered with the old bytes.
 */
describe.runIf(pgOk)('reporting answers kept under their ETag (Postgres)', () => {
  let dbh: DbHandle
  let kept: TestApi
  let fresh: TestApi
  let tokens: Map<TestApi, string>
  let seeded: Awaited<ReturnType<typeof seedRewardsDay>>
  let from: string

  beforeAll(async () => {
    dbh = await migratedTestDatabase()
    seeded = await seedRewardsDay(dbh.db, { holders: 300, sample: 20 })
    from = new Date(Date.parse(`${seeded.date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10)
    kept = await startTestApi('postgres', {}, { dbh })
    fresh = await startTestApi('postgres', {}, { dbh })
    const client = { client_id: seeded.clientId, client_secret: seeded.clientSecret }
    tokens = new Map([
      [kept, await clientToken(kept.url, client)],
      [fresh, await clientToken(fresh.url, client)],
    ])
  }, 180_000)
  afterAll(async () => {
    await kept?.close()
    await fresh?.close()
    await dbh?.close()
  })

  async function ask(
    api: TestApi,
    request: { method: string; url: string; body?: unknown; accept?: string },
  ): Promise<Answer> {
    const res = await fetch(`${api.url}${request.url}`, {
      method: request.method,
      headers: {
        authorization: `Bearer ${tokens.get(api)}`,
        ...(request.accept ? { accept: request.accept } : {}),
        ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
    })
    return {
      status: res.status,
      body: await res.text(),
      headers: Object.fromEntries(KEPT_HEADERS.map((h) => [h, res.headers.get(h)])),
    }
  }

  /** Counts the answers the kept app serves from its memo. */
  function countHits(api: TestApi): () => number {
    const memo = api.app.reportAnswers
    const get = memo.get.bind(memo)
    let hits = 0
    memo.get = (etag) => {
      const answer = get(etag)
      if (answer) hits += 1
      return answer
    }
    return () => hits
  }

  test('behavior: every kept reporting route answers an identical request with the bytes an app with nothing kept builds', async () => {
    const [own, other] = [
      seeded.ownAddresses[0],
      seeded.addresses.find((a) => !seeded.ownAddresses.includes(a)),
    ]
    const range = `from=${from}&to=${seeded.date}`
    const requests = [
      { method: 'GET', url: `/eth/v1/rewards/wallets/${own}/summary?${range}` },
      { method: 'GET', url: `/eth/v1/rewards/wallets/${other}/summary?${range}` },
      { method: 'GET', url: `/eth/v0/rewards/wallets/${own}/summary?${range}&unit=eth` },
      { method: 'GET', url: `/eth/v1/rewards/accounts/${seeded.accountKey}/summary?${range}` },
      {
        method: 'GET',
        url: `/eth/v1/rewards/accounts/${seeded.accountKey}/summary?${range}`,
        accept: 'text/csv',
      },
      {
        method: 'POST',
        url: '/eth/v1/rewards/accounts',
        body: { accounts: [seeded.accountKey], date: seeded.date },
      },
      {
        method: 'POST',
        url: '/eth/v0/rewards/accounts',
        body: { accounts: [seeded.accountKey], date: seeded.date, unit: 'eth' },
      },
      { method: 'POST', url: '/eth/v1/rewards', body: [{ balance: '12.5', from }] },
      { method: 'GET', url: `/eth/v1/platforms/${seeded.date}` },
      { method: 'GET', url: `/eth/v0/operators/${seeded.date}` },
      { method: 'GET', url: `/eth/v0/protocol/${seeded.date}` },
    ]
    const hits = countHits(kept)
    for (const request of requests) {
      const first = await ask(kept, request)
      expect(first.status, `${request.method} ${request.url}: ${first.body}`).toBe(200)
      expect(first.headers.etag, request.url).toMatch(/^"[\w-]{32}"$/)
      expect(kept.app.reportAnswers.get(first.headers.etag as string), request.url).toBeDefined()
      const again = await ask(kept, request)
      const built = await ask(fresh, request)
      expect(again, request.url).toEqual(first)
      expect(built, request.url).toEqual(first)
    }
    // one lookup per request above finds its answer (the checks) and every repeated request is served from it
    expect(hits()).toBe(requests.length * 2)
    expect(kept.app.reportAnswers.bytes).toBeGreaterThan(0)
  })

  test('behavior: the wallets read keeps nothing in the memo (its records carry their bytes) and still answers 304', async () => {
    const memo = fresh.app.reportAnswers
    const get = memo.get.bind(memo)
    let lookups = 0
    memo.get = (etag) => {
      lookups += 1
      return get(etag)
    }
    try {
      const bytesBefore = memo.bytes
      const request = {
        method: 'POST',
        url: '/eth/v1/rewards/wallets',
        body: { addresses: [seeded.ownAddresses[2]], date: seeded.date },
      }
      const first = await ask(fresh, request)
      const again = await ask(fresh, request)
      expect(first.status, first.body).toBe(200)
      expect(again).toEqual(first)
      expect(lookups).toBe(0)
      expect(memo.bytes).toBe(bytesBefore)
      const res = await fetch(`${fresh.url}/eth/v1/rewards/wallets`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens.get(fresh)}`,
          'content-type': 'application/json',
          'if-none-match': first.headers.etag as string,
        },
        body: JSON.stringify(request.body),
      })
      expect(res.status).toBe(304)
    } finally {
      memo.get = get
    }
  })

  test('behavior: a new version of a day is answered with its own bytes, never the kept ones', async () => {
    const address = seeded.ownAddresses[1] as string
    const url = `/eth/v1/rewards/wallets/${address}/summary?from=${from}&to=${seeded.date}`
    const before = await ask(kept, { method: 'GET', url })
    expect(before.status).toBe(200)
    const day = (await dbh.db('days').where({ date: seeded.date }).first()) as ReportDay
    await publishNewVersion(dbh, day, address, '123456789')
    // the visible days are re-read within a second (api/report-cache.ts)
    let after = before
    for (let tries = 0; tries < 50 && after.headers.etag === before.headers.etag; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      after = await ask(kept, { method: 'GET', url })
    }
    expect(after.status).toBe(200)
    expect(after.headers.etag).not.toBe(before.headers.etag)
    expect(after.body).not.toBe(before.body)
    expect(await ask(kept, { method: 'GET', url })).toEqual(after)
    expect(await ask(fresh, { method: 'GET', url })).toEqual(after)
  })
})
