import { hash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { DbHandle } from '../db/index.ts'
import { clientToken, orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { seedRewardsDay } from './helpers/rewards-day.ts'
import { IN_CI, migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
if (IN_CI && !pgOk) throw new Error('Postgres is required in CI')

/**
 * The 1-address read keeps its ETag beside the record it answers (api/routes/rewards/wallets.ts): the ETag
 * must stay the one every reporting read gives (api/reporting/etag.ts): the request's route, its normalized
 * inputs, its currency and the day's version, hashed), per reading organization, on the first request and on
 * every later one, and the other forms of the read (CSV, a currency, two addresses) keep theirs.
 */
describe.runIf(pgOk)('the 1-address read keeps its ETag beside its record (Postgres)', () => {
  let dbh: DbHandle
  let api: TestApi
  let fresh: TestApi
  let seeded: Awaited<ReturnType<typeof seedRewardsDay>>
  let token: string

  beforeAll(async () => {
    dbh = await migratedTestDatabase()
    seeded = await seedRewardsDay(dbh.db, { holders: 300, sample: 20 })
    api = await startTestApi('postgres', {}, { dbh })
    fresh = await startTestApi('postgres', {}, { dbh })
    token = await clientToken(api.url, { client_id: seeded.clientId, client_secret: seeded.clientSecret })
  }, 180_000)
  afterAll(async () => {
    await api?.close()
    await fresh?.close()
    await dbh?.close()
  })

  /** The 1-address read (or `addresses`) at `base` with `token`. */
  async function read(
    base: string,
    bearer: string,
    addresses: string[],
    headers: Record<string, string> = {},
    query = '',
  ) {
    const res = await fetch(`${base}/eth/v1/rewards/wallets${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ addresses, date: seeded.date }),
    })
    return { status: res.status, etag: res.headers.get('etag'), body: await res.text(), headers: res.headers }
  }

  /** The ETag api/reporting/etag.ts gives a read of `addresses` by `orgId` (JSON in ETH unless said). */
  async function expectedEtag(orgId: string, addresses: string[], epoch: string, csv = false, currency = '') {
    const day = (await dbh.db('days').where({ report_epoch: epoch }).first()) as {
      visible_version: number
      content_hash: string | null
    }
    const text =
      `POST /eth/v1/rewards/wallets\n${JSON.stringify({ orgId, addresses, csv })}\n${currency}\n` +
      `${epoch}:${day.visible_version}:${day.content_hash ?? ''}\n`
    return `"${hash('sha256', text, 'base64url').slice(0, 32)}"`
  }

  test("behavior: the ETag is the reporting reads' one, for each organization, the first time and every time after", async () => {
    const other = await orgWithToken(api, { scopes: 'read:eth-rewards', name: 'another reader' })
    const own = seeded.ownAddresses[0] as string
    const elsewhere = seeded.addresses.find((a) => !seeded.ownAddresses.includes(a)) as string
    for (const address of [own, elsewhere]) {
      for (const [orgId, bearer] of [
        [seeded.orgId, token],
        [other.orgId, other.token],
      ] as const) {
        const first = await read(api.url, bearer, [address])
        expect(first.status, first.body).toBe(200)
        const epoch = first.headers.get('x-report-epoch') as string
        expect(first.etag).toBe(await expectedEtag(orgId, [address], epoch))
        const again = await read(api.url, bearer, [address])
        expect(again.etag).toBe(first.etag)
        expect(again.body).toBe(first.body)
        // an app that has kept nothing answers the same
        const built = await read(
          fresh.url,
          bearer === token
            ? await clientToken(fresh.url, { client_id: seeded.clientId, client_secret: seeded.clientSecret })
            : await clientToken(fresh.url, { client_id: other.clientId, client_secret: other.clientSecret }),
          [address],
        )
        expect(built.etag).toBe(first.etag)
        expect(built.body).toBe(first.body)
        // and 304 to it
        const cached = await read(api.url, bearer, [address], { 'if-none-match': first.etag as string })
        expect(cached.status).toBe(304)
      }
    }
  })

  test('behavior: CSV, a currency and two addresses keep their own ETags', async () => {
    const [a, b] = seeded.addresses as [string, string]
    const json = await read(api.url, token, [a])
    const epoch = json.headers.get('x-report-epoch') as string
    const csv = await read(api.url, token, [a], { accept: 'text/csv' })
    expect(csv.status).toBe(200)
    expect(csv.etag).toBe(await expectedEtag(seeded.orgId, [a], epoch, true))
    const usd = await read(api.url, token, [a], {}, '?currency=usd')
    expect(usd.status).toBe(200)
    expect(usd.etag).toBe(await expectedEtag(seeded.orgId, [a], epoch, false, 'usd'))
    const two = await read(api.url, token, [a, b])
    expect(two.status).toBe(200)
    expect(two.etag).toBe(await expectedEtag(seeded.orgId, [a, b], epoch))
    // the JSON read after them still has its own
    expect((await read(api.url, token, [a])).etag).toBe(json.etag)
  })
})
